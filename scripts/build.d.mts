export const SERVER_BUNDLE: string;
export function buildServer(): Promise<string>;
export const LIBRARY_SCRIPT: string;
export function buildLibraryClient(outfile?: string): Promise<string>;
