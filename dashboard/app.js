/**
 * The dashboard's entry module: one hub of data for the page (lib/hub.js)
 * and the views, chosen by the location's hash (`#/`, `#/agents/<id>`,
 * `#/metrics`, `#/cluster`), so every view has a link of its own and the
 * server serves one page.
 */
import { html, render } from 'htm/preact';
import { useEffect, useState } from 'preact/hooks';
import { createApi } from './lib/api.js';
import { createHub } from './lib/hub.js';
import { routeOf } from './lib/route.js';
import { AgentView } from './views/agent-view.js';
import { AgentsView } from './views/agents-view.js';
import { ClusterView } from './views/cluster-view.js';
import { Header } from './views/header.js';
import { LoginPanel } from './views/login-panel.js';
import { MetricsView } from './views/metrics-view.js';

const hub = createHub({ api: createApi({ fetch: window.fetch.bind(window), storage: window.sessionStorage }), location: window.location });

function App() {
  const [, setVersion] = useState(0);
  const [route, setRoute] = useState(routeOf(location.hash));
  useEffect(() => hub.subscribe(() => setVersion((v) => v + 1)), []);
  useEffect(() => {
    const follow = () => setRoute(routeOf(location.hash));
    window.addEventListener('hashchange', follow);
    return () => window.removeEventListener('hashchange', follow);
  }, []);
  const focusId = route.name === 'agent' ? route.id : undefined;
  useEffect(() => void hub.focus(focusId), [focusId]);

  return html`
    <${Header} hub=${hub} route=${route.name} />
    <main>
      ${route.name === 'agent' ? html`<${AgentView} key=${route.id} hub=${hub} agentId=${route.id} />` : null}
      ${route.name === 'agents' ? html`<${AgentsView} hub=${hub} />` : null}
      ${route.name === 'metrics' ? html`<${MetricsView} hub=${hub} />` : null}
      ${route.name === 'cluster' ? html`<${ClusterView} hub=${hub} />` : null}
    </main>
    ${hub.state.auth.required ? html`<${LoginPanel} hub=${hub} />` : null}
  `;
}

const root = document.getElementById('app');
if (root !== null) render(html`<${App} />`, root);
void hub.start();
