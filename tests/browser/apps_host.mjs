// A web host of MCP Apps, as small as a real one can be: the official host library
// (@modelcontextprotocol/ext-apps' AppBridge) renders an app's HTML in a sandboxed frame under
// the CSP its resource asks for, forwards the app's tools/call to the MCP server (through
// window.mcp, which the test provides), and records what the app asks of the host (open a
// link, send a message) and everything the host handed the app. Bundled for the page by
// esbuild (tests/browser/run).
import { AppBridge, PostMessageTransport } from '@modelcontextprotocol/ext-apps/app-bridge';

window.log = [];
/** Everything the host gave the app: tool input, tool results, its tools' answers. */
window.handed = [];

/** The frame's CSP, as a host builds it from the resource's `_meta.ui.csp` (lists of domains). */
function policy(csp = {}) {
  const listed = (name) => (csp[name] ?? []).join(' ');
  return [
    "default-src 'none'",
    `script-src 'unsafe-inline' ${listed('resourceDomains')}`,
    `style-src 'unsafe-inline' ${listed('resourceDomains')}`,
    `img-src data: ${listed('resourceDomains')}`,
    `connect-src ${listed('connectDomains') || "'none'"}`,
    `frame-src ${listed('frameDomains') || "'none'"}`,
    `base-uri ${listed('baseUriDomains') || "'self'"}`,
    "object-src 'none'",
  ].join('; ');
}

/** Renders the app `html` for a call of its tool with `args` and `result`. */
window.mount = async ({ html, csp, args, result, locale = 'en-US', theme = 'light' }) => {
  document.getElementById('app')?.remove();
  const frame = Object.assign(document.createElement('iframe'), { id: 'app', title: 'app' });
  frame.setAttribute('sandbox', 'allow-scripts');
  frame.style.cssText = 'display: block; width: 100%; border: 0; border-radius: 10px; height: 120px';
  document.body.append(frame);
  const bridge = new AppBridge(
    null,
    { name: 'grantry-ci-host', version: '1' },
    { openLinks: {}, serverTools: {}, message: { text: {} }, updateModelContext: { text: {} }, logging: {} },
    {
      hostContext: {
        theme, locale, displayMode: 'inline', platform: 'web',
        availableDisplayModes: ['inline'], containerDimensions: { maxHeight: 2000 },
      },
    },
  );
  bridge.oncalltool = async (params) => {
    const answer = await window.mcp('tools/call', params);
    window.handed.push(answer);
    return answer;
  };
  bridge.onopenlink = async ({ url }) => {
    window.log.push({ openLink: url });
    return {};
  };
  bridge.onmessage = async (params) => {
    window.log.push({ message: params });
    return {};
  };
  bridge.onupdatemodelcontext = async (params) => {
    window.log.push({ context: params });
    return {};
  };
  bridge.onsizechange = ({ height }) => {
    if (height) frame.style.height = `${height}px`;
  };
  bridge.oninitialized = () => {
    window.handed.push(args, result);
    bridge.sendToolInput({ arguments: args });
    bridge.sendToolResult(result);
  };
  await bridge.connect(new PostMessageTransport(frame.contentWindow, frame.contentWindow));
  const meta = `<meta http-equiv="Content-Security-Policy" content="${policy(csp)}">`;
  frame.srcdoc = html.replace(/<head[^>]*>/i, (head) => head + meta);
};
