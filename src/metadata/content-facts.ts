/**
 * What a served representation needs from a resource or revision row: the shared name of the content
 * the service stores (services/content.ts), the images derive (images/) and delivery answers
 * (delivery/). A type of its own below them all, so none imports another's module for it.
 */
export interface ContentFacts {
  blobKey: string;
  size: number;
  sha256: string;
  mediaType: string;
  name: string;
  updatedAt: number;
  /** Set on the files of a zip package. */
  parentUid?: string | null;
}
