export const NODE_VERSION: string;
export const BASE_IMAGE: string;
export const PODMAN_CONF: string;
export const PODMAN_FLAGS: string[];
export function podmanEnv(): NodeJS.ProcessEnv;
export function ensureBaseImage(): string;
