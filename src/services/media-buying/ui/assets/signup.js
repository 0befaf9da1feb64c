// The signup page. `data-mode="start"`: the account type first; Advertiser (or a portfolio) while buyer signup is
// waitlisted opens the advertiser preview form; otherwise email, name and password, then the mailed code, whose
// verification answers the interrupted signup. `data-mode="recovery"` (the `redirectUrl` of an interrupted signup,
// `?pending=true&token=mbv_...`): the verified signup data, the email-availability check and account creation, each
// with the token as `verifiedSignupToken`.

(() => {
  const { api, errorMessage, reasonOf, byId, show, say, busy, afterSignIn } = window.MB;
  const { mode, buyerSignup, planRollout } = document.body.dataset;
  const BUYER_TYPES = ['ADVERTISER', 'ADVERTISER_PORTFOLIO'];
  const chosen = (name) => document.querySelector(`input[name="${name}"]:checked`)?.value;
  const choose = (name, value) => {
    const input = document.querySelector(`input[name="${name}"][value="${value}"]`);
    if (input) input.checked = true;
  };
  const waitlisted = (type) => BUYER_TYPES.includes(type) && buyerSignup === 'waitlisted';

  // ---- the advertiser preview form (both modes) ----
  byId('preview-form').addEventListener('submit', (event) => {
    event.preventDefault();
    say('preview-error', '');
    busy(event.target, async () => {
      const message = byId('preview-message').value.trim();
      const type = chosen(mode === 'recovery' ? 'recoveryType' : 'accountType');
      const answer = await api('POST', '/api/v2/signup/advertiser-preview', {
        workEmail: byId('preview-email').value,
        name: byId('preview-name').value,
        company: byId('preview-company').value,
        ...(message ? { message } : {}),
        ...(BUYER_TYPES.includes(type) ? { signupExperience: type } : {}),
      });
      if (answer.status !== 202) return say('preview-error', errorMessage(answer));
      show('preview-form', false);
      show('preview-done');
    });
  });

  // ---- a new signup ----
  const startMode = () => {
    const update = () => {
      const type = chosen('accountType');
      show('preview-section', type !== undefined && waitlisted(type));
      show('account-section', type !== undefined && !waitlisted(type));
    };
    for (const input of document.querySelectorAll('input[name="accountType"]'))
      input.addEventListener('change', update);
    update();

    byId('signup-form').addEventListener('submit', (event) => {
      event.preventDefault();
      say('signup-error', '');
      busy(event.target, async () => {
        const answer = await api('POST', '/auth/signup', {
          email: byId('signup-email').value,
          name: byId('signup-name').value,
          password: byId('signup-password').value,
        });
        if (answer.status !== 202) return say('signup-error', errorMessage(answer));
        sessionStorage.setItem('mb.signup.type', chosen('accountType') ?? '');
        say('signup-code-sent', answer.body.data.message);
        show('signup-form', false);
        show('signup-code-form');
        byId('signup-code').focus();
      });
    });

    byId('signup-code-form').addEventListener('submit', (event) => {
      event.preventDefault();
      say('signup-error', '');
      busy(event.target, async () => {
        // The password chosen above goes with the code: that is what sets it (the code alone only proves the email).
        const answer = await api('POST', '/auth/verify-code', {
          email: byId('signup-email').value,
          code: byId('signup-code').value.trim(),
          password: byId('signup-password').value,
        });
        if (answer.status === 200) afterSignIn(answer.body.data, '/account');
        else say('signup-error', errorMessage(answer));
      });
    });

    byId('signup-sso').addEventListener('click', async (event) => {
      say('signup-error', '');
      const type = chosen('accountType');
      const query = type ? `?signup_experience=${encodeURIComponent(type)}` : '';
      event.target.disabled = true;
      const answer = await api('GET', `/auth/sso/url${query}`);
      event.target.disabled = false;
      if (answer.status !== 200) return say('signup-error', errorMessage(answer));
      const url = new URL(answer.body.data.url);
      sessionStorage.setItem('mb.sso.state', url.searchParams.get('state') ?? '');
      sessionStorage.setItem('mb.next', '/account');
      sessionStorage.setItem('mb.signup.type', type ?? '');
      location.assign(url.toString());
    });
  };

  // ---- the interrupted signup ----
  const recoveryMode = async () => {
    const token = new URLSearchParams(location.search).get('token') ?? '';
    const expired = () => {
      show('recovery-loading', false);
      show('account-form', false);
      show('preview-section', false);
      show('recovery-expired');
    };
    if (!token) return expired();
    const data = await api('GET', `/auth/verified-signup-data/${encodeURIComponent(token)}`);
    if (data.status !== 200) return expired();
    const { email, name, signupExperience } = data.body.data;
    const availability = await api('POST', '/api/v2/signup/email-availability', {
      verifiedSignupToken: token,
      email,
    });
    show('recovery-loading', false);
    if (availability.status !== 200) return expired();
    if (!availability.body.data.storefrontAccountSignupAllowed) return show('recovery-has-account');
    const planStep = availability.body.data.storefrontIuSignupAllowed && planRollout === 'open';

    byId('recovery-email').textContent = email;
    byId('account-name').value = name ?? '';
    byId('preview-email').value = email;
    byId('preview-name').value = name ?? '';
    // Routing metadata only preselects the form; the person chooses.
    choose('recoveryType', signupExperience ?? sessionStorage.getItem('mb.signup.type') ?? '');
    const update = () => {
      const type = chosen('recoveryType');
      const buyerWaitlisted = type !== undefined && waitlisted(type);
      show('preview-section', buyerWaitlisted);
      show('create-account', !buyerWaitlisted);
      show('organization-field', type !== 'DEVELOPER');
      byId('organization-name').required = type !== undefined && type !== 'DEVELOPER';
      show('storefront-fields', type === 'MEDIA_COMPANY');
      show('plan-fields', type === 'MEDIA_COMPANY' && planStep);
    };
    for (const input of document.querySelectorAll('input[name="recoveryType"]'))
      input.addEventListener('change', update);
    update();
    show('account-form');

    byId('account-form').addEventListener('submit', (event) => {
      event.preventDefault();
      say('account-error', '');
      const type = chosen('recoveryType');
      const body = { verifiedSignupToken: token, accountType: type, name: byId('account-name').value };
      if (type !== 'DEVELOPER') body.organizationName = byId('organization-name').value;
      if (type === 'MEDIA_COMPANY') {
        const storefrontName = byId('storefront-name').value.trim();
        body.storefront = { currency: byId('storefront-currency').value.trim() || 'USD' };
        if (storefrontName) body.storefront.name = storefrontName;
        if (planStep && byId('plan').value) body.plan = byId('plan').value;
        if (planStep && byId('signup-code-value').value.trim())
          body.signupCode = byId('signup-code-value').value.trim();
      }
      busy(event.target, async () => {
        const answer = await api('POST', '/api/v2/signup/accounts', body);
        if (answer.status === 201) {
          sessionStorage.removeItem('mb.signup.type');
          return location.assign('/account');
        }
        if (reasonOf(answer) === 'buyer_signup_waitlisted') show('preview-section');
        if (answer.status === 422 && answer.body?.error?.field === 'verifiedSignupToken') return expired();
        say('account-error', errorMessage(answer));
      });
    });
  };

  if (mode === 'recovery') recoveryMode();
  else startMode();
})();
