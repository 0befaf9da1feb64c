// The invitation page (`?token=mbi_...`): the organization, role and any pending Commercial Offer; creating the
// account (or joining as the signed-in invited user); then the outstanding Terms of Service and their acceptance.
// Joining never accepts the offer: an administrator decides it on the account page.

(() => {
  const { api, errorMessage, byId, show, say, busy, when } = window.MB;
  const token = new URLSearchParams(location.search).get('token') ?? '';
  const KINDS = { buyer: 'Buyer Account', seller: 'Seller Account' };
  let invitation = null;

  const finish = async (accepted) => {
    show('invitation', false);
    byId('done-organization').textContent = accepted.organization.name;
    show('done-offer', accepted.commercialOffer?.status === 'pending');
    if (!accepted.outstandingTermsVersion) return show('done');
    const terms = await api('GET', '/api/v2/terms/current');
    if (terms.status !== 200 || !terms.body.data) return show('done');
    byId('terms-title').textContent = `${terms.body.data.title} (version ${terms.body.data.version})`;
    byId('terms-body').textContent = terms.body.data.body;
    byId('accept-terms').dataset.version = terms.body.data.version;
    show('terms-step');
  };

  const accept = async (form, body) =>
    busy(form, async () => {
      say('accept-error', '');
      const answer = await api('POST', '/api/v2/invitations/accept', { token, ...body });
      if (answer.status === 200) return finish(answer.body.data);
      say('accept-error', errorMessage(answer));
    });

  byId('create-form').addEventListener('submit', (event) => {
    event.preventDefault();
    accept(event.target, { name: byId('accept-name').value, password: byId('accept-password').value });
  });
  byId('join-form').addEventListener('submit', (event) => {
    event.preventDefault();
    accept(event.target, {});
  });
  byId('sign-out-other').addEventListener('click', async () => {
    await api('POST', '/auth/sign-out');
    location.reload();
  });
  byId('accept-terms').addEventListener('click', async (event) => {
    say('terms-error', '');
    event.target.disabled = true;
    const answer = await api('POST', '/api/v2/terms/accept', { version: event.target.dataset.version });
    event.target.disabled = false;
    if (answer.status !== 200) return say('terms-error', errorMessage(answer));
    show('terms-step', false);
    show('done');
  });

  const load = async () => {
    if (!/^mbi_[A-Za-z0-9_-]{43}$/.test(token)) {
      show('invitation-loading', false);
      return say(
        'invitation-error',
        'This invitation link is incomplete. Open the whole link from the mail.',
      );
    }
    const answer = await api('GET', `/api/v2/invitations/lookup?token=${encodeURIComponent(token)}`);
    show('invitation-loading', false);
    if (answer.status !== 200) return say('invitation-error', errorMessage(answer));
    invitation = answer.body.data;
    byId('invitation-organization').textContent = invitation.organization.name;
    byId('invitation-kind').textContent = KINDS[invitation.organization.kind] ?? invitation.organization.kind;
    byId('invitation-role').textContent =
      invitation.invitation.role === 'admin' ? 'an administrator' : 'a member';
    byId('invitation-email').textContent = invitation.invitation.email;
    byId('invitation-inviter').textContent = invitation.invitedBy ? `, from ${invitation.invitedBy}` : '';
    byId('invitation-expires').textContent = when(invitation.invitation.expiresAt);
    const offer = invitation.commercialOffer;
    if (offer) {
      byId('offer-title').textContent = `${offer.title} (${offer.status})`;
      byId('offer-terms').textContent = offer.terms;
      show('offer');
    }
    show('invitation');
    const me = await api('GET', '/auth/me');
    const email = invitation.invitation.email;
    if (me.status === 200 && me.body.data.credential.interactive) {
      if (me.body.data.user.email === email) {
        byId('join-email').textContent = email;
        return show('join-form');
      }
      byId('other-email').textContent = me.body.data.user.email;
      return show('signed-in-other');
    }
    if (invitation.accountExists) {
      byId('sign-in-first-email').textContent = email;
      byId('sign-in-link').href = `/sign-in?next=${encodeURIComponent(location.pathname + location.search)}`;
      return show('sign-in-first');
    }
    byId('accept-name').value = invitation.invitation.name ?? '';
    show('create-form');
  };
  load();
})();
