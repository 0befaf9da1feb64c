// The account page: accepting the outstanding Terms of Service, and (administrators) deciding the organization's
// Commercial Offers.

(() => {
  const { api, errorMessage, byId, show, say, el, when } = window.MB;

  const accept = byId('accept-terms');
  if (accept) {
    accept.addEventListener('click', async () => {
      say('terms-error', '');
      accept.disabled = true;
      const answer = await api('POST', '/api/v2/terms/accept', { version: accept.dataset.version });
      if (answer.status === 200) return location.reload();
      accept.disabled = false;
      say('terms-error', errorMessage(answer));
    });
  }

  const list = byId('offers-list');
  if (!list) return;
  const load = async () => {
    const answer = await api('GET', '/api/v2/organizations/current/commercial-offers');
    if (answer.status !== 200) return say('offers-error', errorMessage(answer));
    list.replaceChildren();
    show('offers-empty', answer.body.data.length === 0);
    for (const offer of answer.body.data) {
      const item = el(
        'article',
        { class: 'card', 'data-offer': offer.id },
        el('h3', {}, offer.title, ' ', el('span', { class: 'badge' }, offer.status)),
        el('p', { class: 'pre' }, offer.terms),
        el(
          'p',
          { class: 'muted' },
          `Received ${when(offer.createdAt)}`,
          offer.decidedAt ? `; decided ${when(offer.decidedAt)}` : '',
        ),
      );
      if (offer.status === 'pending') {
        for (const [verb, label] of [
          ['accept', 'Accept the offer'],
          ['decline', 'Decline'],
        ]) {
          const button = el('button', { type: 'button', class: verb === 'accept' ? '' : 'secondary' }, label);
          button.addEventListener('click', async () => {
            say('offers-error', '');
            button.disabled = true;
            const decided = await api(
              'POST',
              `/api/v2/organizations/current/commercial-offers/${encodeURIComponent(offer.id)}/${verb}`,
            );
            if (decided.status !== 200) say('offers-error', errorMessage(decided));
            load();
          });
          item.append(button, ' ');
        }
      }
      list.append(item);
    }
  };
  load();
})();
