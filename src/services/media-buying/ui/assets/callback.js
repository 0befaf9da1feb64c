// The callback of a sign-in round trip (`data-flow`: `sso` for SSO, `auth` for the hosted sign-in): the state must be
// the one this browser started with (else the callback is refused here: login CSRF), then the code is completed.

(() => {
  const { api, errorMessage, say, show, afterSignIn, localPath } = window.MB;
  const flow = document.body.dataset.flow;
  const params = new URLSearchParams(location.search);
  // The code is single use and short-lived; it leaves the address bar and the history now.
  history.replaceState(null, '', location.pathname);
  const expected = sessionStorage.getItem(`mb.${flow}.state`);
  sessionStorage.removeItem(`mb.${flow}.state`);
  const next = localPath(sessionStorage.getItem('mb.next')) ?? '/account';
  sessionStorage.removeItem('mb.next');

  const fail = (message) => {
    say('callback-status', '');
    say('callback-error', message);
    show('restart');
  };

  const complete = async () => {
    const code = params.get('code');
    const state = params.get('state');
    if (params.get('error'))
      return fail(
        `The sign-in was not completed: ${params.get('error_description') ?? params.get('error')}.`,
      );
    if (!code || !state) return fail('This sign-in link is incomplete.');
    if (!expected || expected !== state)
      return fail('This sign-in was not started in this browser. Start again.');
    const body = { code, state };
    if (flow === 'sso' && params.get('iss')) body.iss = params.get('iss');
    const answer = await api('POST', flow === 'sso' ? '/auth/sso/callback' : '/auth/token', body);
    if (answer.status === 200) afterSignIn(answer.body.data, next);
    else fail(errorMessage(answer));
  };
  complete();
})();
