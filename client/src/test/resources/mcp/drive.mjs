// Drives a Lifeline MCP server with the official TypeScript MCP SDK client (McpServerTest).
// argv[2]: a JSON plan {"transport": "stdio"|"http", "command", "args", "env", "url", "calls": [{"name", "arguments"}]}.
// Prints one JSON line: {"server", "tools": [{name, inputSchema, outputSchema, description}], "results": [...]}.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { readFileSync } from 'node:fs';

const plan = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const transport = plan.transport === 'http'
  ? new StreamableHTTPClientTransport(new URL(plan.url))
  : new StdioClientTransport({ command: plan.command, args: plan.args, env: plan.env, stderr: 'inherit' });
const client = new Client({ name: 'lifeline-test', version: '1.0.0' });
await client.connect(transport);
const listed = await client.listTools();
const results = [];
for (const call of plan.calls) {
  try {
    const r = await client.callTool({ name: call.name, arguments: call.arguments });
    results.push({ name: call.name, isError: r.isError === true, structuredContent: r.structuredContent ?? null,
      text: (r.content ?? []).filter(c => c.type === 'text').map(c => c.text).join('\n') });
  } catch (e) {
    results.push({ name: call.name, protocolError: String(e && e.message ? e.message : e) });
  }
}
const out = { server: client.getServerVersion(), sessionId: transport.sessionId ?? null,
  tools: listed.tools.map(t => ({ name: t.name, description: t.description, inputSchema: t.inputSchema,
    outputSchema: t.outputSchema ?? null })), results };
await client.close();
process.stdout.write(JSON.stringify(out) + '\n');
