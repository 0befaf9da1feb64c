// The connected apps page: the MCP connectors of the signed-in user, and disconnecting one (its access and refresh
// credentials stop at once).

(() => {
  const { api, errorMessage, byId, show, say, el, when } = window.MB;

  const load = async () => {
    const answer = await api('GET', '/api/v2/connected-apps?take=100');
    if (answer.status !== 200) return say('connected-error', errorMessage(answer));
    const body = byId('connected-body');
    body.replaceChildren();
    show('connected', answer.body.data.length > 0);
    show('connected-empty', answer.body.data.length === 0);
    for (const app of answer.body.data) {
      const disconnect = el('button', { type: 'button', class: 'secondary' }, 'Disconnect');
      disconnect.addEventListener('click', async () => {
        if (!confirm(`Disconnect ${app.appName}? It loses access at once and must be authorized again.`))
          return;
        say('connected-error', '');
        disconnect.disabled = true;
        const done = await api('DELETE', `/api/v2/connected-apps/${encodeURIComponent(app.id)}`);
        if (done.status !== 200) say('connected-error', errorMessage(done));
        load();
      });
      body.append(
        el(
          'tr',
          { 'data-connection': app.id },
          el('td', {}, app.appName),
          el(
            'td',
            {},
            app.resource === null
              ? 'authorize again (connected before resource binding)'
              : el('code', {}, app.resource),
          ),
          el('td', {}, when(app.firstConnectedAt)),
          el('td', {}, when(app.lastRefreshedAt)),
          el('td', {}, disconnect),
        ),
      );
    }
    show('connected-more', answer.body.meta.pagination.hasMore);
  };
  load();
})();
