/** Test support: JSON-RPC messages of the MCP session era that tests send by hand (raw HTTP, no SDK client). */

/**
 * The `initialize` request of a session-era client (MCP 2025-11-25) named `clientName`, JSON-RPC id 1, no
 * capabilities: what opens a session on an endpoint that serves the initialize/session lifecycle.
 */
export function initializeMessage(clientName: string) {
  return {
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: {
      protocolVersion: '2025-11-25',
      capabilities: {},
      clientInfo: { name: clientName, version: '1' },
    },
  };
}
