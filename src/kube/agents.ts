import https from 'node:https';

/**
 * One keep-alive HTTPS agent per API server (scheme, host and port), shared by every cluster entry that points at it: a
 * fleet of a thousand contexts on a few servers then pays a few TLS handshakes instead of one per request, and new
 * connections resume TLS sessions the agent cached. Node keeps separate socket pools inside one agent for different TLS
 * options (CA, client certificate and key, server name), so credentials carried in TLS never share a connection;
 * bearer tokens travel in headers and may (as in client-go, one transport per TLS configuration). Idle sockets are
 * unreferenced by the agent, so they never keep the process alive.
 */
const agents = new Map<string, https.Agent>();
const opened = new Map<string, number>();

export function agentFor(server: URL): https.Agent {
  const key = server.origin;
  let agent = agents.get(key);
  if (!agent) {
    agent = new https.Agent({ keepAlive: true, maxCachedSessions: 100 });
    const create = agent.createConnection.bind(agent);
    agent.createConnection = (...args: Parameters<typeof create>) => {
      countConnection(server);
      return create(...args);
    };
    agents.set(key, agent);
  }
  return agent;
}

/** Counts a connection opened to a server (HTTP/1.1 through the agent, or an HTTP/2 session in h2.ts). */
export function countConnection(server: URL): void {
  opened.set(server.origin, (opened.get(server.origin) ?? 0) + 1);
}

/** How many connections were opened to a server by this process (what the sharing saves is visible in tests). */
export function connectionsOpened(server: URL): number {
  return opened.get(server.origin) ?? 0;
}
