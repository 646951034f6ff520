/**
 * The one comparison of API server URLs (docs/decisions.md, "Servers compared as kubectl dials them"): two spellings
 * are one server only when kubectl (client-go, Go's net/url and net/http) dials the same scheme, host and port and
 * asks under the same path. Used by creds (is the Secret's server the member's?) and by kubeconfig credential (is
 * kubectl connecting where the provider says the cluster is?), so both refuse the same spellings.
 *
 * Go's url.Parse keeps the host as written: it does not apply IDNA, does not rewrite IPv4 shorthands (`127.1`,
 * `0x7f.0.0.1`, `2130706433`) and keeps a trailing dot; net.Dial then resolves such a host as a name (net.ParseIP
 * accepts none of them), so DNS, not the operator, decides where `https://127.1:6443` goes. WHATWG URL (Node's `new
 * URL`) rewrites all of them to `127.0.0.1`, which is why it is not used here. What is folded, because Go dials it the
 * same: the scheme's case (url.Parse lower-cases it), an explicit default port or an empty one (net/http adds :443 or
 * :80 for none), trailing slashes of the path (client-go joins the API path with path.Join), and the host's ASCII case
 * (DNS names are case-insensitive, RFC 4343, and crypto/tls compares certificate names case-insensitively). A trailing
 * dot is not folded: `example.com.` is an absolute name while `example.com` may be completed by the resolver's search
 * list, so they can reach different hosts. Anything this does not recognise (percent-escapes, characters beyond the
 * plain host syntax, another scheme, no scheme) is compared exactly as written: a refusal at most, never a match Go
 * would not make.
 */
const SIMPLE =
  /^([A-Za-z][A-Za-z0-9+.-]*):\/\/(?:([A-Za-z0-9._~!$&'()*+,;=:-]*)@)?(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._~-]+)(?::([0-9]*))?(\/[^?#]*)?(\?[^#]*)?(#.*)?$/;

const DEFAULT_PORT: Record<string, string> = { https: '443', http: '80' };

/** The key two server URLs compare by: equal keys are one server as kubectl dials it. */
export function serverKey(server: string): string {
  const m = SIMPLE.exec(server);
  if (!m) return `raw:${server}`;
  const [, schemeText, user, host, port, path, query, fragment] = m;
  const scheme = schemeText.toLowerCase();
  const defaultPort = DEFAULT_PORT[scheme];
  if (!defaultPort) return `raw:${server}`;
  const dialPort = port === undefined || port === '' ? defaultPort : port;
  return `${scheme}://${user !== undefined ? `${user}@` : ''}${host.toLowerCase()}:${dialPort}${(path ?? '').replace(/\/+$/, '')}${query ?? ''}${fragment ?? ''}`;
}

/** Whether two server URLs are one server as kubectl dials them (serverKey). */
export function sameServer(a: string | undefined, b: string | undefined): boolean {
  return a !== undefined && b !== undefined && a !== '' && serverKey(a) === serverKey(b);
}

/** The host and port kubectl dials for a server URL it would use over TLS, or undefined (http, not recognised). */
export function tlsDialTarget(server: string): { host: string; port: number; servername: string } | undefined {
  const m = SIMPLE.exec(server);
  if (!m || m[1].toLowerCase() !== 'https') return undefined;
  const host = m[3].startsWith('[') ? m[3].slice(1, -1) : m[3];
  const port = m[4] ? Number(m[4]) : 443;
  if (!Number.isInteger(port) || port < 1 || port > 65535) return undefined;
  return { host, port, servername: host };
}
