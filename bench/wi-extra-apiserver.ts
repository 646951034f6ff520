// Measures the harness helper behind the workload-identity e2e tests: how long an extra kube-apiserver takes to start
// on a running control plane, and how long after its --authentication-config file is rewritten a hub token is accepted
// (reload, then the hub discovery fetch). Needs FLEET_TEST_CONTROL_PLANE and a hub ServiceAccount demo/app.
//   FLEET_TEST_CONTROL_PLANE=.sandbox/state.json node --import tsx bench/wi-extra-apiserver.ts
import { readFileSync } from 'node:fs';
import { startExtraApiserver } from '../test/support/extra-apiserver.js';
import { apiRequest, createServiceAccountToken, loadControlPlane } from '../test/support/fixture.js';
const cp = loadControlPlane();
for (let run = 0; run < 2; run++) {
  let t = performance.now();
  const x = await startExtraApiserver({
    authenticationConfig: ({ url }) => ({
      apiVersion: 'apiserver.config.k8s.io/v1',
      kind: 'AuthenticationConfiguration',
      jwt: [
        {
          issuer: { url: 'https://placeholder.invalid', audiences: [url] },
          claimMappings: { username: { claim: 'sub', prefix: 'p:' } },
        },
      ],
    }),
  });
  const startMs = performance.now() - t;
  const token = await createServiceAccountToken(cp.hub, 'demo', 'app', { audience: x.url });
  t = performance.now();
  x.writeAuthenticationConfig({
    apiVersion: 'apiserver.config.k8s.io/v1',
    kind: 'AuthenticationConfiguration',
    jwt: [
      {
        issuer: { url: cp.hub.issuer, audiences: [x.url], certificateAuthority: readFileSync(cp.hub.caFile, 'utf8') },
        claimMappings: { username: { claim: 'sub', prefix: 'hub:' } },
      },
    ],
  });
  for (;;) {
    const r = await apiRequest({
      url: x.url,
      caFile: x.caFile,
      token,
      path: '/apis/authentication.k8s.io/v1/selfsubjectreviews',
      body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' },
    });
    if (r.status === 201) break;
    await new Promise((r) => setTimeout(r, 200));
  }
  const reloadMs = performance.now() - t;
  // The same change by restarting the process on the same port and etcd prefix.
  const token2 = await createServiceAccountToken(cp.hub, 'demo', 'app', { audience: x.url });
  t = performance.now();
  await x.restartWithAuthenticationConfig({
    apiVersion: 'apiserver.config.k8s.io/v1',
    kind: 'AuthenticationConfiguration',
    jwt: [
      {
        issuer: { url: cp.hub.issuer, audiences: [x.url], certificateAuthority: readFileSync(cp.hub.caFile, 'utf8') },
        claimMappings: { username: { claim: 'sub', prefix: 'hub2:' } },
      },
    ],
  });
  for (;;) {
    const r = await apiRequest({
      url: x.url,
      caFile: x.caFile,
      token: token2,
      path: '/apis/authentication.k8s.io/v1/selfsubjectreviews',
      body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' },
    });
    if (r.status === 201 && r.body.includes('hub2:')) break;
    await new Promise((r) => setTimeout(r, 200));
  }
  console.log(
    `run ${run}: start ${(startMs / 1000).toFixed(1)} s, file rewritten→accepted ${(reloadMs / 1000).toFixed(1)} s, restart→accepted ${((performance.now() - t) / 1000).toFixed(1)} s`,
  );
  await x.stop();
}
