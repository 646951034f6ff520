import type { Agent } from 'node:http';

/**
 * The agent that carries a cluster's requests through its `proxy-url`, for the schemes client-go supports: http and
 * https proxies (CONNECT for an https server, an absolute-URI request for an http one) and socks5. The agents come from
 * the maintained proxy-agents family and are imported only when a cluster names a proxy. As in client-go, the TLS
 * settings of the cluster (its CA, insecure-skip-tls-verify) also apply to an https proxy.
 */
export async function proxyAgent(proxy: URL, server: URL, tls: { ca?: Buffer; insecure: boolean }): Promise<Agent> {
  if (proxy.protocol === 'socks5:' || proxy.protocol === 'socks5h:') {
    const { SocksProxyAgent } = await import('socks-proxy-agent');
    return new SocksProxyAgent(proxy);
  }
  const proxyTls = proxy.protocol === 'https:' ? { ca: tls.ca, rejectUnauthorized: !tls.insecure } : {};
  if (server.protocol === 'http:') {
    const { HttpProxyAgent } = await import('http-proxy-agent');
    return new HttpProxyAgent(proxy, proxyTls);
  }
  const { HttpsProxyAgent } = await import('https-proxy-agent');
  return new HttpsProxyAgent(proxy, proxyTls);
}
