/**
 * oidc-provider warns "Unsupported runtime" on any Node release older than 22 LTS when it is first
 * imported. The dev IdP is a development and test tool, tested on Node 20 like the service, which the
 * README supports (package.json "engines"): that one line is dropped on Node 20 only, before
 * oidc-provider loads (this module is imported ahead of it); every other warning passes.
 */
const NOTICE = "oidc-provider WARNING: Unsupported runtime";

if (process.versions.node.startsWith("20.")) {
  const warn = console.warn.bind(console);
  console.warn = (...args: unknown[]) => {
    if (typeof args[0] === "string" && args[0].includes(NOTICE)) return;
    warn(...args);
  };
}
