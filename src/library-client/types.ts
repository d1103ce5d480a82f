/** The API's answers as the page reads them (the ResourceItem, Usage, Revision and Lock schemas). */

export interface Resource {
  resourceUID: string;
  resourceURI: string;
  author: string;
  mediaType: string;
  size: number;
  sha256: string;
  createdAt: string;
}

export interface ResourcePage {
  resources: Resource[];
  nextCursor: string | null;
}

export interface Usage {
  bytes: number;
  resources: number;
  limits: { bytes: number | null; resources: number | null };
}

export interface Revision {
  revision: number;
  action: "create" | "update" | "delete";
  resourceName: string;
  author: string;
  mediaType: string;
  size: number;
  sha256: string;
  createdAt: string;
}

export interface Lock {
  lockID: string | null;
  lockOwner: string;
  lockExpiration: string;
}

export interface Settings {
  apiPrefix: string;
  tenantClaim: string | null;
  maxLinkSeconds: number;
}
