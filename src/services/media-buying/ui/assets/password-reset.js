// The password-reset pages. `data-mode="request"`: asks for a reset link (one answer whatever the account).
// `data-mode="confirm"`: the link's token (in the fragment, so it never reaches a server log) and a new password,
// which signs the person in.

(() => {
  const { api, errorMessage, byId, show, say, busy, afterSignIn } = window.MB;

  if (document.body.dataset.mode === 'request') {
    byId('forgot-form').addEventListener('submit', (event) => {
      event.preventDefault();
      say('forgot-error', '');
      busy(event.target, async () => {
        const answer = await api('POST', '/auth/password-reset', { email: byId('forgot-email').value });
        if (answer.status !== 202) return say('forgot-error', errorMessage(answer));
        show('forgot-form', false);
        say('forgot-done', answer.body.data.message);
      });
    });
    return;
  }

  const token = new URLSearchParams(location.hash.slice(1)).get('token') ?? '';
  // The token leaves the address bar and the history now; the page keeps it in memory.
  history.replaceState(null, '', location.pathname);
  if (!token) {
    show('reset-form', false);
    show('reset-missing');
    return;
  }
  byId('reset-form').addEventListener('submit', (event) => {
    event.preventDefault();
    say('reset-error', '');
    const password = byId('new-password').value;
    if (password !== byId('confirm-password').value) return say('reset-error', 'The two passwords differ.');
    busy(event.target, async () => {
      const answer = await api('POST', '/auth/password-reset/confirm', { token, password });
      if (answer.status === 200) afterSignIn(answer.body.data, '/account');
      else say('reset-error', errorMessage(answer));
    });
  });
})();
