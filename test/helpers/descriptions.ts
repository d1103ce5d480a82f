/** Issue 38: the descriptive fields as every resource answer (and webhook body) shows them when unset. */
export const UNSET_DESCRIPTION = {
  title: null,
  description: null,
  altText: null,
  tags: [],
  folder: "/",
  metadata: {},
  metadataVersion: "1",
} as const;
