import { createHash } from "node:crypto";
import type { PoolRecord } from "../pool-store.js";

/** The branding members the pages and GET /branding show, read leniently from the pool's document. */
export interface PageBranding {
  readonly displayName: string;
  readonly logoUrl?: string;
  readonly faviconUrl?: string;
  readonly primaryColor?: string;
  readonly pageBackgroundColor?: string;
}

const COLOR = /^#[0-9a-fA-F]{6}$/;

/**
 * The page's branding. A URL the page could not use (not http or https, or not one a browser
 * parses, stored before writes were checked) is left out rather than breaking every page.
 */
export function pageBrandingOf(record: PoolRecord): PageBranding {
  const doc = record.branding;
  const url = (value: unknown) =>
    typeof value === "string" && /^https?:\/\//.test(value) && URL.canParse(value) ? value : undefined;
  const color = (value: unknown) => (typeof value === "string" && COLOR.test(value) ? value : undefined);
  const logoUrl = url(doc.logo_url);
  const faviconUrl = url(doc.favicon_url);
  const primaryColor = color(doc.primary_color);
  const pageBackgroundColor = color(doc.page_background_color);
  return {
    displayName: record.displayName || record.name,
    ...(logoUrl ? { logoUrl } : {}),
    ...(faviconUrl ? { faviconUrl } : {}),
    ...(primaryColor ? { primaryColor } : {}),
    ...(pageBackgroundColor ? { pageBackgroundColor } : {}),
  };
}

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** A finished page and the headers that must go with it. */
export interface RenderedPage {
  readonly html: string;
  readonly headers: {
    readonly "cache-control": "no-store";
    readonly "content-security-policy": string;
    readonly "referrer-policy": "no-referrer";
  };
}

export interface PageContent {
  readonly title: string;
  /** Already escaped HTML: build it with {@link escapeHtml} around every value. */
  readonly body: string;
  /** Origins the page's forms may end up at besides its own (a redirect after the login form). */
  readonly formTargets?: readonly string[];
}

/**
 * One hosted page: a complete document that works without JavaScript (none is sent, and the
 * content security policy forbids it), styled by one inline stylesheet allowed by its hash, so
 * nothing else can be injected even if an escape were missed. No other site may frame it, and its
 * URL (which carries a transaction or an e-mailed token) is never sent as a referrer.
 */
export function renderHostedPage(branding: PageBranding, content: PageContent): RenderedPage {
  const primary = branding.primaryColor ?? "#2f5bd3";
  const background = branding.pageBackgroundColor ?? "#f4f5f7";
  const style = [
    `body{margin:0;font-family:system-ui,sans-serif;background:${background};color:#1b1d21}`,
    "main{max-width:24rem;margin:4rem auto;padding:2rem;background:#fff;border-radius:8px;box-shadow:0 1px 4px rgba(0,0,0,.15)}",
    "h1{font-size:1.4rem;margin:0 0 1rem}label{display:block;margin:.8rem 0 .3rem;font-size:.9rem}",
    "input{width:100%;box-sizing:border-box;padding:.55rem;border:1px solid #b8bcc4;border-radius:4px;font-size:1rem}",
    `button{margin-top:1.2rem;width:100%;padding:.65rem;border:0;border-radius:4px;background:${primary};color:#fff;font-size:1rem;cursor:pointer}`,
    ".error{color:#b00020}.notice{color:#1d6b2f}.logo{max-height:3rem;display:block;margin:0 auto 1rem}",
    `details{margin-top:1.5rem}summary{cursor:pointer;color:${primary}}`,
  ].join("");
  const styleHash = createHash("sha256").update(style, "utf8").digest("base64");
  const imageOrigins = [branding.logoUrl, branding.faviconUrl].flatMap((url) => (url ? [new URL(url).origin] : []));
  const csp = [
    "default-src 'none'",
    `style-src 'sha256-${styleHash}'`,
    `img-src ${imageOrigins.length > 0 ? [...new Set(imageOrigins)].join(" ") : "'none'"}`,
    ["form-action 'self'", ...new Set(content.formTargets ?? [])].join(" "),
    "frame-ancestors 'none'",
    "base-uri 'none'",
  ].join("; ");
  const name = escapeHtml(branding.displayName);
  const html = [
    "<!doctype html>",
    '<html lang="en"><head><meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    `<title>${escapeHtml(content.title)} · ${name}</title>`,
    branding.faviconUrl ? `<link rel="icon" href="${escapeHtml(branding.faviconUrl)}">` : "",
    `<style>${style}</style>`,
    "</head><body><main>",
    branding.logoUrl ? `<img class="logo" src="${escapeHtml(branding.logoUrl)}" alt="${name}">` : "",
    content.body,
    "</main></body></html>",
    "",
  ].join("\n");
  return {
    html,
    headers: { "cache-control": "no-store", "content-security-policy": csp, "referrer-policy": "no-referrer" },
  };
}

/** A page with a heading and one sentence: confirmations and errors. */
export function renderMessagePage(
  branding: PageBranding,
  title: string,
  message: string,
  kind: "notice" | "error",
): RenderedPage {
  return renderHostedPage(branding, {
    title,
    body: `<h1>${escapeHtml(title)}</h1>\n<p class="${kind}">${escapeHtml(message)}</p>`,
  });
}

/** The page shown when the pool itself is unknown: no branding to show. */
export function plainBranding(name: string): PageBranding {
  return { displayName: name };
}
