// Shared by every page of the media-buying service: calls to the JSON API (same origin: the browser sends Origin and
// the session cookie), small DOM helpers that only ever set text (never HTML), the signed-in layout (organization
// switcher, sign-out) and the copy buttons of secrets shown once.

window.MB = (() => {
  const byId = (id) => document.getElementById(id);

  /**
   * Calls the API. Resolves `{status, body}` (the parsed JSON, or null); a network failure resolves status 0.
   */
  const api = async (method, path, body) => {
    const init = { method, credentials: 'same-origin', headers: { accept: 'application/json' } };
    if (body !== undefined) {
      init.headers['content-type'] = 'application/json';
      init.body = JSON.stringify(body);
    }
    try {
      const res = await fetch(path, init);
      const text = await res.text();
      let parsed = null;
      try {
        parsed = text === '' ? null : JSON.parse(text);
      } catch {
        parsed = null;
      }
      return { status: res.status, body: parsed };
    } catch {
      return { status: 0, body: null };
    }
  };

  /** The message of a failed answer: the envelope's, the flat body's, or a generic one. */
  const errorMessage = (answer) => {
    const body = answer.body;
    if (answer.status === 0) return 'The service could not be reached. Check your connection and try again.';
    if (body?.error && typeof body.error === 'object' && typeof body.error.message === 'string')
      return body.error.message;
    if (body && typeof body.message === 'string') return body.message;
    return `The request failed (HTTP ${answer.status}). Try again.`;
  };

  /** `details.reason` of a failed answer, if any. */
  const reasonOf = (answer) => answer.body?.error?.details?.reason;

  /** Shows or hides an element. */
  const show = (el, visible = true) => {
    const target = typeof el === 'string' ? byId(el) : el;
    if (target) target.hidden = !visible;
  };

  /** Sets an element's text (and shows it, unless the text is empty). */
  const say = (id, text) => {
    const el = byId(id);
    if (!el) return;
    el.textContent = text;
    el.hidden = text === '';
  };

  /** A new element with text children (strings become text nodes) and properties. */
  const el = (tag, props, ...children) => {
    const node = document.createElement(tag);
    for (const [name, value] of Object.entries(props ?? {})) {
      if (name === 'class') node.className = value;
      else if (name.startsWith('data-') || name === 'aria-label') node.setAttribute(name, value);
      else node[name] = value;
    }
    for (const child of children)
      node.append(typeof child === 'string' ? document.createTextNode(child) : child);
    return node;
  };

  /** An instant as `2026-11-25 10:00 UTC`. */
  const when = (iso) => (iso ? `${new Date(iso).toISOString().slice(0, 16).replace('T', ' ')} UTC` : 'never');

  /** A path of this site (`/account?x`), or null: never another origin (`//evil`, `/\evil`, `https:`). */
  const localPath = (value) => {
    if (
      typeof value !== 'string' ||
      !value.startsWith('/') ||
      value.startsWith('//') ||
      value.startsWith('/\\')
    )
      return null;
    const url = new URL(value, location.origin);
    return url.origin === location.origin ? url.pathname + url.search + url.hash : null;
  };

  /** Where a finished sign-in goes: the interrupted signup's page, or `next`. */
  const afterSignIn = (data, next) => {
    if (data?.requiresSignup) location.assign(localPath(data.redirectUrl) ?? '/signup');
    else location.assign(localPath(next) ?? '/account');
  };

  /** Disables a form's buttons while `work` runs. */
  const busy = async (form, work) => {
    const buttons = form.querySelectorAll('button');
    for (const b of buttons) b.disabled = true;
    try {
      return await work();
    } finally {
      for (const b of buttons) b.disabled = false;
    }
  };

  /** Copies an input's value with the button next to it, and says so in `statusId`. */
  const copyButton = (buttonId, inputId, statusId) => {
    const button = byId(buttonId);
    if (!button) return;
    button.addEventListener('click', async () => {
      const input = byId(inputId);
      try {
        await navigator.clipboard.writeText(input.value);
        say(statusId, 'Copied.');
      } catch {
        input.select();
        say(statusId, 'Select the text and copy it (your browser did not allow the copy button).');
      }
    });
  };

  // The signed-in layout: switching the active organization and signing out.
  const switcher = byId('organization-switcher');
  if (switcher) {
    switcher.addEventListener('change', async () => {
      const answer = await api('POST', '/api/v2/organizations/active', { organizationId: switcher.value });
      if (answer.status === 200) location.reload();
      else say('switch-error', errorMessage(answer));
    });
  }
  const signOut = byId('sign-out');
  if (signOut) {
    signOut.addEventListener('click', async () => {
      const answer = await api('POST', '/auth/sign-out');
      if (answer.status === 200 || answer.status === 401) location.assign('/sign-in');
      else say('switch-error', errorMessage(answer));
    });
  }

  return { api, errorMessage, reasonOf, byId, show, say, el, when, localPath, afterSignIn, busy, copyButton };
})();
