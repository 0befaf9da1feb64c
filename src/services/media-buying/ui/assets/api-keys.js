// The API keys page: create a key (shown once, with a copy button), the keys masked, revoke one.

(() => {
  const { api, errorMessage, byId, show, say, el, when, busy, copyButton } = window.MB;
  const organizationName = (id) => {
    const option = document.querySelector(`#organization-switcher option[value="${CSS.escape(id)}"]`);
    return option ? option.textContent : id;
  };

  const load = async () => {
    const answer = await api('GET', '/api/v2/user-api-keys');
    if (answer.status !== 200) return say('keys-error', errorMessage(answer));
    const body = byId('keys-body');
    body.replaceChildren();
    show('keys', answer.body.data.length > 0);
    show('keys-empty', answer.body.data.length === 0);
    for (const key of answer.body.data) {
      const revoke = el('button', { type: 'button', class: 'secondary' }, 'Revoke');
      revoke.addEventListener('click', async () => {
        if (!confirm(`Revoke the key ${key.maskedKey}? Anything using it stops working at once.`)) return;
        say('keys-error', '');
        revoke.disabled = true;
        const revoked = await api('DELETE', `/api/v2/user-api-keys/${encodeURIComponent(key.id)}`);
        if (revoked.status !== 200) say('keys-error', errorMessage(revoked));
        load();
      });
      body.append(
        el(
          'tr',
          { 'data-key': key.id },
          el('td', {}, key.label ?? ''),
          el('td', {}, el('code', { class: 'masked' }, key.maskedKey)),
          el('td', {}, organizationName(key.organizationId)),
          el('td', {}, when(key.createdAt)),
          el('td', {}, revoke),
        ),
      );
    }
  };

  byId('key-form').addEventListener('submit', (event) => {
    event.preventDefault();
    say('key-error', '');
    show('new-key-panel', false);
    busy(event.target, async () => {
      const label = byId('key-label').value.trim();
      const answer = await api('POST', '/api/v2/user-api-keys', label ? { label } : {});
      if (answer.status !== 201) return say('key-error', errorMessage(answer));
      byId('new-key').value = answer.body.data.key;
      say('copy-status', '');
      show('new-key-panel');
      byId('key-label').value = '';
      load();
    });
  });
  copyButton('copy-key', 'new-key', 'copy-status');
  load();
})();
