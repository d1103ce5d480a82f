export const SERVER_BUNDLE: string;
export function replaceFile(path: string, contents: string | Uint8Array): Promise<void>;
export function buildServer(outfile?: string): Promise<string>;
export const LIBRARY_SCRIPT: string;
export function buildLibraryClient(outfile?: string): Promise<string>;
export const CLI_BUNDLE: string;
export const CLI_INPUTS: string;
export function buildCli(): Promise<string>;
