// The M2M applications page (administrators): create one (the client secret shown once, with the token endpoint and
// the resource indicator), the applications with their secrets' hints, add a secret (a rotation: shown once), delete
// a secret, delete an application.

(() => {
  const { api, errorMessage, byId, show, say, el, when, busy, copyButton } = window.MB;
  const base = '/api/v2/m2m-applications';

  /** Shows a client secret once, with what a backend needs to get tokens. */
  const reveal = (application, clientSecret, tokenEndpoint, resource) => {
    byId('secret-app-name').textContent = application.name;
    byId('secret-client-id').textContent = application.clientId;
    byId('client-secret').value = clientSecret;
    byId('secret-token-endpoint').textContent = tokenEndpoint ?? byId('token-endpoint').textContent;
    byId('secret-resource').textContent = resource ?? byId('resource').textContent;
    say('copy-status', '');
    show('secret-panel');
    byId('secret-panel').scrollIntoView();
  };

  const act = async (method, path, onDone) => {
    say('apps-error', '');
    const answer = await api(method, path);
    if (answer.status !== 200 && answer.status !== 201) say('apps-error', errorMessage(answer));
    else onDone?.(answer.body.data);
    load();
  };

  const card = (app) => {
    const secrets = el('ul', { class: 'secrets' });
    for (const secret of app.secrets) {
      const remove = el('button', { type: 'button', class: 'secondary' }, 'Delete secret');
      remove.addEventListener('click', () => {
        if (
          !confirm(`Delete the secret ending in ${secret.hint}? Backends using it can no longer get tokens.`)
        )
          return;
        act('DELETE', `${base}/${encodeURIComponent(app.id)}/secrets/${secret.id}`);
      });
      secrets.append(
        el(
          'li',
          { 'data-secret': String(secret.id) },
          `…${secret.hint}, created ${when(secret.createdAt)} `,
          remove,
        ),
      );
    }
    const addSecret = el('button', { type: 'button', class: 'secondary' }, 'Add a secret');
    addSecret.addEventListener('click', () =>
      act('POST', `${base}/${encodeURIComponent(app.id)}/secrets`, (data) =>
        reveal(data.application, data.clientSecret),
      ),
    );
    const remove = el('button', { type: 'button', class: 'danger' }, 'Delete application');
    remove.addEventListener('click', () => {
      if (!confirm(`Delete ${app.name}? Its tokens are refused at once.`)) return;
      act('DELETE', `${base}/${encodeURIComponent(app.id)}`, () => show('secret-panel', false));
    });
    return el(
      'article',
      { class: 'card', 'data-application': app.id },
      el('h3', {}, app.name),
      el('p', {}, 'Client ID ', el('code', {}, app.clientId)),
      el('p', {}, 'Permissions: ', app.permissions.join(', ')),
      el(
        'p',
        { class: 'muted' },
        `Created ${when(app.createdAt)}. Client secrets (at most two valid at once):`,
      ),
      secrets,
      el('p', { class: 'actions' }, addSecret, ' ', remove),
    );
  };

  const load = async () => {
    const answer = await api('GET', base);
    if (answer.status !== 200) return say('apps-error', errorMessage(answer));
    const apps = byId('apps');
    apps.replaceChildren(...answer.body.data.map(card));
    show('apps-empty', answer.body.data.length === 0);
  };

  byId('app-form').addEventListener('submit', (event) => {
    event.preventDefault();
    say('app-error', '');
    const permissions = [...document.querySelectorAll('input[name="permission"]:checked')].map(
      (i) => i.value,
    );
    if (permissions.length === 0) return say('app-error', 'Choose at least one permission.');
    busy(event.target, async () => {
      const answer = await api('POST', base, { name: byId('app-name').value, permissions });
      if (answer.status !== 201) return say('app-error', errorMessage(answer));
      const { application, clientSecret, tokenEndpoint, resource } = answer.body.data;
      reveal(application, clientSecret, tokenEndpoint, resource);
      byId('app-name').value = '';
      load();
    });
  });
  copyButton('copy-secret', 'client-secret', 'copy-status');
  load();
})();
