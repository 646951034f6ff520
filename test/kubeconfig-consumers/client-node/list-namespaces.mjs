// How a Node.js program uses a kubeconfig: @kubernetes/client-node loads the default kubeconfig the way its users do
// (KubeConfig.loadFromDefault: the KUBECONFIG variable, else ~/.kube/config; no path argument), and for every context
// in it (sorted by name) a CoreV1Api made after setCurrentContext lists the namespaces. On what `fleet kubeconfig
// export` wrote, the users are exec entries: client-node runs the plugin itself, when the request is built (spawned
// without a shell, the environment inherited, no KUBERNETES_EXEC_INFO). Prints one JSON line per context,
// {"context": ..., "namespaces": [...]} or {"context": ..., "error": "Class: message"}, and exits 1 when any context
// failed. Installed with its lockfile's packages by test/kubeconfig-consumers/build-client-node.sh, which runs it.
// client-node 2.0.1 fetches through undici 8, which needs Node 22.19 or newer (it fails to load on Node 20 with a
// TypeError from its zstd decoder): said plainly here, before the import, instead.
const [major, minor] = process.versions.node.split('.').map(Number);
if (major < 22 || (major === 22 && minor < 19)) {
  console.error(
    `error: @kubernetes/client-node 2.0.1 needs Node 22.19 or newer; this node (${process.execPath}) is ${process.version}`,
  );
  process.exit(1);
}
const { CoreV1Api, KubeConfig, Observable } = await import('@kubernetes/client-node');

const requestTimeoutMs = 30_000;
// The exec plugin runs before the request exists, out of reach of the request's signal: a plugin that hangs is cut off
// by this limit on the whole context instead.
const contextTimeoutMs = 60_000;

if (process.argv.length > 2) {
  console.error(
    "usage: list-namespaces.mjs (the kubeconfig is client-node's default: KUBECONFIG, else ~/.kube/config)",
  );
  process.exit(2);
}

const kc = new KubeConfig();
try {
  // Unlike client-go, it refuses a KUBECONFIG list whose files share a cluster, user or context name ("Duplicate
  // cluster: NAME"); and with no kubeconfig at all it makes up a context "loaded-context" for http://localhost:8080.
  kc.loadFromDefault();
} catch (e) {
  console.error(
    `error: client-node did not load the kubeconfig (KUBECONFIG=${process.env.KUBECONFIG ?? ''}): ${describe(e)}`,
  );
  process.exit(1);
}
const names = kc
  .getContexts()
  .map((c) => c.name)
  .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
if (names.length === 0) {
  console.error(`error: the kubeconfig client-node loaded has no context (KUBECONFIG=${process.env.KUBECONFIG ?? ''})`);
  process.exit(1);
}

// Each request gets an abort signal: client-node sets no timeout of its own. The object-parameter API (CoreV1Api) takes
// the Observable kind of middleware (its own small stand-in for rxjs), not the Promise kind.
const withTimeout = {
  middleware: [
    {
      pre: (ctx) => {
        ctx.setSignal(AbortSignal.timeout(requestTimeoutMs));
        return new Observable(Promise.resolve(ctx));
      },
      post: (rsp) => new Observable(Promise.resolve(rsp)),
    },
  ],
  middlewareMergeStrategy: 'append',
};

let failed = false;
for (const name of names) {
  const line = { context: name };
  let timer;
  try {
    kc.setCurrentContext(name);
    const api = kc.makeApiClient(CoreV1Api);
    const list = await Promise.race([
      api.listNamespace({}, withTimeout),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer in ${contextTimeoutMs / 1000} s`)), contextTimeoutMs);
      }),
    ]);
    line.namespaces = list.items.map((n) => n.metadata.name);
  } catch (e) {
    line.error = describe(e);
    failed = true;
  } finally {
    clearTimeout(timer);
  }
  process.stdout.write(`${JSON.stringify(line)}\n`);
}
// A plugin cut off above may still run; end without waiting for it.
process.exitCode = failed ? 1 : 0;
process.stdout.write('', () => process.exit());

/** The error's class and message, then each cause's ("fetch failed" hides the useful one), with tokens cut out. */
function describe(e) {
  const parts = [];
  for (let t = e, depth = 0; t && depth < 5; t = t.cause, depth++) {
    parts.push(t instanceof Error ? `${t.constructor.name}: ${t.message}` : String(t));
  }
  let text = parts.join('; caused by ');
  const user = kc.getCurrentContext() ? kc.getCurrentUser() : null;
  for (const secret of [user?.token, user?.password, user?.keyData]) {
    if (secret && secret.length >= 4) text = text.split(secret).join('REDACTED');
  }
  return text.replace(/(bearer\s+)[^\s"',;]+/gi, '$1REDACTED');
}
