/**
 * What the server-rendered pages (the explorer, the library) share to stay safe in a browser: JSON
 * that cannot break out of a <script> element, CSP hash-sources of inline scripts and styles, and
 * one Content-Security-Policy shape (nothing by default, no base or form targets, never framed;
 * requests to this origin, the identity provider's token endpoint and what a page adds).
 */
import { Sha256 } from "../lib/sha256.js";

/** JSON inside <script> that cannot close the element (`</script>`) or open a comment. */
export const safeJson = (value: unknown) => JSON.stringify(value).replaceAll("<", "\\u003c");

/** The CSP hash-source (`'sha256-…'`) of an inline script's or stylesheet's text. */
export const hashSource = (text: string) =>
  `'sha256-${btoa(String.fromCharCode(...new Sha256().update(new TextEncoder().encode(text)).digest()))}'`;

/** CSP hash-sources of the executable inline scripts (`<script>` with no attributes) in `html`. */
export const inlineScriptHashes = (html: string): string[] =>
  [...html.matchAll(/<script>([\s\S]*?)<\/script>/g)].map((match) => hashSource(match[1] as string));

/** A page's sources per directive; each is a space-separated source list. */
export interface PageSources {
  script: string;
  style: string;
  img: string;
  media: string;
  /** Only where the page shows objects (the explorer's PDF previews). */
  object?: string;
  frame: string;
  /** The identity provider's token endpoint, which the page's login calls; null when auth is off. */
  tokenUrl: string | null;
  /** More origins the page sends requests to (the library: the bucket its upload URLs are on). */
  connect?: readonly string[];
}

/** An http(s) origin and nothing else: no path, no CSP syntax (`;`, `,`, quotes, `*`) can ride along. */
const PLAIN_ORIGIN = /^https?:\/\/(?:[a-z0-9-]+(?:\.[a-z0-9-]+)*|\[[0-9a-f:.]+\])(?::\d{1,5})?$/;

/**
 * `origin` as a CSP source, or a RangeError when it is not a plain http(s) origin. The pages list
 * only origins from the configuration; this keeps a stray character in one (a bucket name in a
 * virtual-hosted URL) from becoming CSP syntax.
 */
export function originSource(origin: string): string {
  if (!PLAIN_ORIGIN.test(origin))
    throw new RangeError(`not a plain http(s) origin for a CSP: ${JSON.stringify(origin)}`);
  return origin;
}

/** The page's Content-Security-Policy. */
export function pageCsp(sources: PageSources): string {
  const connect = [
    "'self'",
    ...(sources.tokenUrl ? [new URL(sources.tokenUrl).origin] : []),
    ...(sources.connect ?? []).map(originSource),
  ];
  return [
    "default-src 'none'",
    `script-src ${sources.script}`,
    `style-src ${sources.style}`,
    `img-src ${sources.img}`,
    `media-src ${sources.media}`,
    ...(sources.object ? [`object-src ${sources.object}`] : []),
    `frame-src ${sources.frame}`,
    `connect-src ${connect.join(" ")}`,
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join("; ");
}
