// Issue 46, item 5: every JSON document of data fleet decodes is bounded in depth before it is parsed (base/json.ts
// parseJson, MAX_JSON_DEPTH, the bound of every response body). An Argo CD `execProviderConfig.config` nested 400,000
// deep ended a run with `internal: Maximum call stack size exceeded`; each decoder here now names the limit in its one
// line, or reads such a document as none where "not ours" is the answer (a cache entry, a state file, a token's claims).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { JsonTooDeep, nestedDeeperThan, parseJson } from '../../src/base/json.js';
import { MAX_JSON_DEPTH } from '../../src/base/limits.js';
import { parseArgocdConfig } from '../../src/providers/hub/argocd.js';
import { keepArgocdConfig } from '../../src/creds/codecs/argocd.js';
import { parseAccessConfig } from '../../src/providers/hub/access-providers.js';
import { parseClusterList } from '../../src/providers/exec.js';
import { readExecRequest } from '../../src/export/exec-info.js';
import { parseExecInfo } from '../../src/workload-identity/plugin.js';
import { parseExecOutput } from '../../src/kube/exec-credential.js';
import { jwtClaims } from '../../src/kubeconfig/credentials.js';
import { parseStatus } from '../../src/kube/errors.js';

/** `depth` arrays, one inside the other, as the attacker's Secret held them. */
const deep = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);
const DEEP = deep(400_000);
const LIMIT = new RegExp(`JSON nested deeper than ${MAX_JSON_DEPTH} levels`);
const b64 = (s: string) => Buffer.from(s).toString('base64');
/** The error's own message matches (assert.throws with a RegExp would test `Name: message`). */
const says = (re: RegExp) => (e: Error) => re.test(e.message);

describe('JSON depth limits on data', () => {
  it('parseJson refuses text deeper than MAX_JSON_DEPTH before parsing; exactly the limit, strings and escapes count right', () => {
    assert.throws(() => parseJson(DEEP), JsonTooDeep);
    assert.throws(() => parseJson(deep(MAX_JSON_DEPTH + 1)), LIMIT);
    assert.deepEqual(JSON.stringify(parseJson(deep(MAX_JSON_DEPTH))).length, 2 * MAX_JSON_DEPTH);
    // Brackets inside strings (and an escaped quote) are text, not nesting.
    const inString = JSON.stringify({ s: `\\"${'['.repeat(5000)}` });
    assert.equal((parseJson(inString) as { s: string }).s.length, 5002);
    assert.equal(nestedDeeperThan(`["é", ${'['.repeat(3)}"ü"${']'.repeat(3)}]`, 3), true);
    assert.equal(nestedDeeperThan(Buffer.from(deep(4)), 4), false);
    // Not JSON: JSON.parse's own error, not the depth.
    assert.throws(
      () => parseJson('{"a": '),
      (e: Error) => e instanceof SyntaxError && !(e instanceof JsonTooDeep),
    );
  });

  it("an Argo CD Secret's config with execProviderConfig.config 400,000 deep: one reason naming the limit (was a stack overflow later)", () => {
    const started = performance.now();
    const text = `{"execProviderConfig":{"command":"argocd-k8s-auth","apiVersion":"client.authentication.k8s.io/v1","config":${DEEP}}}`;
    const r = parseArgocdConfig(text);
    assert.ok(r instanceof Error, 'the Secret is refused');
    assert.match(r.message, LIMIT);
    assert.ok(performance.now() - started < 2_000, 'bounded before parsing: no walk over 400,000 levels');
    // The limit itself is Argo CD's kind of document still.
    const ok = parseArgocdConfig(`{"execProviderConfig":{"command":"c","config":${deep(MAX_JSON_DEPTH - 2)}}}`);
    assert.ok(!(ok instanceof Error), ok instanceof Error ? ok.message : '');
    // A rotation keeping the old config's fields never parses the deep one: it is replaced whole.
    const fresh = b64('{"bearerToken":"t"}');
    assert.equal(keepArgocdConfig(b64(text), fresh), fresh);
  });

  it('program output, KUBERNETES_EXEC_INFO and an access-provider file: one line naming the document and the limit', () => {
    assert.throws(
      () =>
        parseClusterList(`{"apiVersion":"fleet.dev/v1alpha1","kind":"ClusterList","clusters":${DEEP}}`, {
          provider: 'inv',
          program: '/usr/local/bin/inventory',
        }),
      says(/^\/usr\/local\/bin\/inventory: output is JSON nested deeper than 1000 levels/),
    );
    assert.throws(
      () => parseExecOutput(`{"kind":"ExecCredential","status":${DEEP}}`, 'client.authentication.k8s.io/v1', 'plug'),
      says(/^exec plugin plug: output is JSON nested deeper than 1000 levels$/),
    );
    const info = `{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","spec":{"cluster":{"server":"https://h","config":${DEEP}}}}`;
    assert.throws(() => readExecRequest(info), says(/^KUBERNETES_EXEC_INFO: JSON nested deeper than 1000 levels$/));
    assert.throws(() => parseExecInfo(info), says(/^KUBERNETES_EXEC_INFO: JSON nested deeper than 1000 levels$/));
    assert.throws(
      () => parseAccessConfig(`{"providers":${DEEP}}`, '/etc/access.json', {}),
      says(/^\/etc\/access\.json: JSON nested deeper than 1000 levels$/),
    );
  });

  it('a token whose claims nest 400,000 deep has no claims; a Status body that deep is no Status', () => {
    const segment = (s: string) => Buffer.from(s).toString('base64url');
    const token = `${segment('{"alg":"RS256"}')}.${segment(`{"sub":"x","deep":${DEEP}}`)}.sig`;
    assert.equal(jwtClaims(token), undefined);
    assert.equal(parseStatus(`{"kind":"Status","details":${DEEP}}`), undefined);
  });
});
