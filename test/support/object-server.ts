// A small real HTTPS server that keeps Kubernetes objects by their REST path, for unit tests of code that reads and
// writes a few objects (the rotation's Secret store, its steps' anchor deletes) where the behaviour under test is the
// caller's, not the API server's: GET, PUT with the resourceVersion precondition (409 on a stale one, as the API server
// answers), DELETE, and server-side apply as a create-or-merge. Every request is recorded. fleet's own KubeClient
// talks to it over TLS, so nothing of fleet's is replaced.
import {mkdtemp, readFile} from 'node:fs/promises'
import {createServer, type Server} from 'node:https'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {KubeClient} from '../../src/kube/client.js'
import {ExecCredentialRunner} from '../../src/kube/exec-credential.js'
import {makeCa, makeLeaf} from './pki.js'

type Obj = {metadata: {name: string; namespace?: string; resourceVersion?: string; uid?: string; [k: string]: unknown}; [k: string]: unknown}

const status = (code: number, reason: string, message: string) => ({kind: 'Status', apiVersion: 'v1', status: 'Failure', reason, message, code})

export interface ObjectServer {
  client: KubeClient
  /** Objects by REST path (no query). Tests put, read and change them directly (a concurrent writer). */
  objects: Map<string, Obj>
  /** `METHOD path` of every request, in order. */
  requests: string[]
  /** Answers a request before the store does (a fault); undefined lets the store answer. */
  intercept?: (method: string, path: string) => {status: number; body: unknown} | undefined
  close(): Promise<void>
}

export async function startObjectServer(): Promise<ObjectServer> {
  const dir = await mkdtemp(join(tmpdir(), 'fleet-object-server-'))
  const ca = await makeCa(dir, 'ca', 'object-server-ca')
  const leaf = await makeLeaf({ca, dir, base: 'server', cn: 'localhost', usage: 'server', ips: ['127.0.0.1']})
  let version = 100
  const self: Omit<ObjectServer, 'client' | 'close'> = {objects: new Map(), requests: []}
  const answer = (method: string, path: string, body: Obj | undefined): {status: number; body: unknown} => {
    const faulted = self.intercept?.(method, path)
    if (faulted) return faulted
    const have = self.objects.get(path)
    const stored = (o: Obj, uid?: string) => {
      const next = {...o, metadata: {...o.metadata, resourceVersion: String(++version), uid: uid ?? `uid-${version}`}}
      self.objects.set(path, next)
      return next
    }
    if (method === 'GET') return have ? {status: 200, body: have} : {status: 404, body: status(404, 'NotFound', `${path} not found`)}
    if (method === 'DELETE') {
      if (!have) return {status: 404, body: status(404, 'NotFound', `${path} not found`)}
      self.objects.delete(path)
      return {status: 200, body: have}
    }
    if (method === 'PUT') {
      if (!have) return {status: 404, body: status(404, 'NotFound', `${path} not found`)}
      const rv = body?.metadata.resourceVersion
      if (rv && rv !== have.metadata.resourceVersion) return {status: 409, body: status(409, 'Conflict', 'the object has been modified; please apply your changes to the latest version and try again')}
      return {status: 200, body: stored(body!, have.metadata.uid)}
    }
    if (method === 'PATCH') {
      const merged = have ? {...have, ...body, metadata: {...have.metadata, ...body!.metadata}} : body!
      return {status: have ? 200 : 201, body: stored(merged, have?.metadata.uid)}
    }
    return {status: 405, body: status(405, 'MethodNotAllowed', `${method} not served here`)}
  }
  const server: Server = createServer({cert: await readFile(leaf.certFile), key: await readFile(leaf.keyFile)}, (req, res) => {
    let text = ''
    req.on('data', (d) => (text += d))
    req.on('end', () => {
      const path = req.url!.split('?')[0]
      self.requests.push(`${req.method} ${path}`)
      const a = answer(req.method!, path, text ? (JSON.parse(text) as Obj) : undefined)
      res.writeHead(a.status, {'content-type': 'application/json'})
      res.end(JSON.stringify(a.body))
    })
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  const url = `https://127.0.0.1:${(server.address() as {port: number}).port}`
  const client = await KubeClient.connect(
    {
      contextName: 'objects', clusterName: 'objects', contextFile: '', clusterFile: '',
      cluster: {server: url, 'certificate-authority-data': (await readFile(ca.certFile)).toString('base64')},
      user: {token: 'object-server-token-123456'},
    },
    {timeoutMs: 5000, clusterName: 'objects', exec: new ExecCredentialRunner()},
  )
  return Object.assign(self, {client, close: () => new Promise<void>((r) => server.close(() => r()))}) as ObjectServer
}
