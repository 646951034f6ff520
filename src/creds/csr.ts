import { KeyObject, webcrypto } from 'node:crypto';
import * as x509 from '@peculiar/x509';

/**
 * An ECDSA P-256 key pair made in this process and a PKCS#10 request for it (CN = user, O = each group), built with
 * @peculiar/x509 because Node has no CSR builder. The private key is returned as SEC1 PEM ("EC PRIVATE KEY", what kubeadm
 * writes) for the kubeconfig only: every client reads that form (client-go, kubectl, the Python, Rust and Node
 * clients), and fabric8's Java client reads an EC key only so (with BouncyCastle, which its users add): a PKCS#8 EC key
 * fails there with "Invalid DER: object is not integer" (test/e2e/kubeconfig-export.test.ts runs it).
 */
const ALGORITHM = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' };

export async function makeClientKeyAndCsr(user: string, groups: string[]): Promise<{ keyPem: string; csrPem: string }> {
  x509.cryptoProvider.set(webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[0]);
  const keys = await webcrypto.subtle.generateKey(ALGORITHM, true, ['sign', 'verify']);
  // Built as a structured name, so a "," or "=" in a user name cannot add attributes.
  const name = new x509.Name([{ CN: [user] }, ...groups.map((g) => ({ O: [g] }))]);
  const csr = await x509.Pkcs10CertificateRequestGenerator.create({
    name,
    keys: keys,
    signingAlgorithm: ALGORITHM,
  });
  const keyPem = KeyObject.from(keys.privateKey).export({ type: 'sec1', format: 'pem' }) as string;
  return { keyPem, csrPem: csr.toString('pem') };
}
