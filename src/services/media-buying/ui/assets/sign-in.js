// The sign-in page: password, an emailed code (request, then verify), SSO and the identity provider's hosted page.

(() => {
  const { api, errorMessage, byId, show, say, afterSignIn, busy, localPath } = window.MB;
  const next = localPath(document.body.dataset.next) ?? '/account';

  byId('password-form').addEventListener('submit', (event) => {
    event.preventDefault();
    say('password-error', '');
    busy(event.target, async () => {
      const answer = await api('POST', '/auth/password', {
        email: byId('email').value,
        password: byId('password').value,
      });
      if (answer.status === 200) afterSignIn(answer.body.data, next);
      else say('password-error', errorMessage(answer));
    });
  });

  byId('code-request-form').addEventListener('submit', (event) => {
    event.preventDefault();
    say('code-error', '');
    busy(event.target, async () => {
      const answer = await api('POST', '/auth/magic-code', { email: byId('code-email').value });
      if (answer.status !== 202) return say('code-error', errorMessage(answer));
      say('code-sent', answer.body.data.message);
      show('code-verify-form');
      byId('code').focus();
    });
  });

  byId('code-verify-form').addEventListener('submit', (event) => {
    event.preventDefault();
    say('code-error', '');
    busy(event.target, async () => {
      const answer = await api('POST', '/auth/verify-code', {
        email: byId('code-email').value,
        code: byId('code').value.trim(),
      });
      if (answer.status === 200) afterSignIn(answer.body.data, next);
      else say('code-error', errorMessage(answer));
    });
  });

  /** Starts a round trip (`sso` or `auth`): keeps its state to check the callback against, then goes. */
  const start = async (flow, button) => {
    say('redirect-error', '');
    button.disabled = true;
    const answer = await api('GET', flow === 'sso' ? '/auth/sso/url' : '/auth/url');
    button.disabled = false;
    if (answer.status !== 200) return say('redirect-error', errorMessage(answer));
    const url = new URL(answer.body.data.url);
    sessionStorage.setItem(`mb.${flow}.state`, url.searchParams.get('state') ?? '');
    sessionStorage.setItem('mb.next', next);
    location.assign(url.toString());
  };
  byId('sso-button').addEventListener('click', (event) => start('sso', event.target));
  byId('hosted-button').addEventListener('click', (event) => start('auth', event.target));
})();
