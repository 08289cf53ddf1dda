import { escapeHtml, renderHostedPage, type PageBranding, type RenderedPage } from "./hosted-page.js";

/**
 * The hosted forms. Each posts to the issuer path it sits under (relative actions, so the pages
 * work behind any public base URL) and needs no JavaScript.
 */

export function renderLoginPage(
  branding: PageBranding,
  input: {
    readonly transaction: string;
    readonly email?: string;
    readonly error?: string;
    readonly notice?: string;
    readonly redirectOrigin: string;
  },
): RenderedPage {
  const body = [
    `<h1>Sign in to ${escapeHtml(branding.displayName)}</h1>`,
    input.error ? `<p class="error" role="alert">${escapeHtml(input.error)}</p>` : "",
    input.notice ? `<p class="notice" role="status">${escapeHtml(input.notice)}</p>` : "",
    '<form method="post" action="login">',
    `<input type="hidden" name="transaction" value="${escapeHtml(input.transaction)}">`,
    '<label for="email">E-mail address</label>',
    `<input id="email" name="email" type="email" autocomplete="username" required maxlength="254" value="${escapeHtml(input.email ?? "")}">`,
    '<label for="password">Password</label>',
    '<input id="password" name="password" type="password" autocomplete="current-password" required maxlength="128">',
    '<button type="submit">Sign in</button>',
    "</form>",
    "<details><summary>Forgot your password?</summary>",
    '<form method="post" action="recover">',
    '<label for="recover-email">E-mail address</label>',
    '<input id="recover-email" name="email" type="email" autocomplete="email" required maxlength="254">',
    '<button type="submit">Send a reset link</button>',
    "</form></details>",
  ].join("\n");
  return renderHostedPage(branding, { title: "Sign in", body, formTargets: [input.redirectOrigin] });
}

export function renderResetPage(
  branding: PageBranding,
  input: { readonly token: string; readonly minLength: number; readonly error?: string },
): RenderedPage {
  const body = [
    "<h1>Choose a new password</h1>",
    input.error ? `<p class="error" role="alert">${escapeHtml(input.error)}</p>` : "",
    '<form method="post" action="reset">',
    `<input type="hidden" name="token" value="${escapeHtml(input.token)}">`,
    `<label for="password">New password (at least ${input.minLength} characters)</label>`,
    `<input id="password" name="password" type="password" autocomplete="new-password" required minlength="${input.minLength}" maxlength="128">`,
    '<button type="submit">Set password</button>',
    "</form>",
  ].join("\n");
  return renderHostedPage(branding, { title: "Choose a new password", body });
}

export function renderVerifyPage(branding: PageBranding, input: { readonly token: string }): RenderedPage {
  const body = [
    "<h1>Confirm your e-mail address</h1>",
    `<p>Confirm the address you registered with ${escapeHtml(branding.displayName)}.</p>`,
    '<form method="post" action="verify">',
    `<input type="hidden" name="token" value="${escapeHtml(input.token)}">`,
    '<button type="submit">Confirm</button>',
    "</form>",
  ].join("\n");
  return renderHostedPage(branding, { title: "Confirm your e-mail address", body });
}
