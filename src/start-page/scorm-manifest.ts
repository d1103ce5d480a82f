/**
 * Picks the launch href from a SCORM 1.2 / 2004 `imsmanifest.xml`: the resource behind the default
 * organization's first item, else the first SCO, else the first resource with an href.
 */
import { localName, xmlTags } from "./xml-tags.js";

/** A resource's launch reference, with the `xml:base` values that apply to it, outermost first. */
export interface LaunchReference {
  href: string;
  bases: string[];
}

interface Resource extends LaunchReference {
  identifier: string | undefined;
  sco: boolean;
}

/** Attribute by lowercased local name, whatever the prefix (`adlcp:scormType`, `adlcp:scormtype`). */
function attribute(attributes: Map<string, string>, local: string): string | undefined {
  for (const [name, value] of attributes) if (localName(name) === local) return value;
  return undefined;
}

/** Returns the launch reference, or undefined when the manifest names no launchable resource. */
export function scormLaunch(xml: string): LaunchReference | undefined {
  const open: { local: string; base: string | undefined }[] = [];
  const organizations: { identifier: string | undefined; firstRef: string | undefined }[] = [];
  const organizationStack: (typeof organizations)[number][] = [];
  const resources: Resource[] = [];
  let defaultOrganization: string | undefined;

  for (const tag of xmlTags(xml)) {
    if (tag.kind === "end") {
      // Tolerant nesting: close back to the matching element if it is open, else ignore the tag.
      const at = open.map((e) => e.local).lastIndexOf(tag.local);
      if (at < 0) continue;
      for (const closed of open.splice(at)) if (closed.local === "organization") organizationStack.pop();
      continue;
    }
    const { local, attributes } = tag;
    const base = attributes.get("xml:base");
    if (local === "organizations") defaultOrganization ??= attributes.get("default");
    if (local === "organization") {
      const organization = { identifier: attributes.get("identifier"), firstRef: undefined };
      organizations.push(organization);
      if (!tag.selfClosing) organizationStack.push(organization);
    }
    const current = organizationStack.at(-1);
    if (local === "item" && current && current.firstRef === undefined)
      current.firstRef = attributes.get("identifierref");
    if (local === "resource") {
      const bases = [...open.map((e) => e.base), base].filter((b): b is string => b !== undefined && b !== "");
      resources.push({
        identifier: attributes.get("identifier"),
        href: attributes.get("href")?.trim() ?? "",
        bases,
        sco: attribute(attributes, "scormtype")?.trim().toLowerCase() === "sco",
      });
    }
    if (!tag.selfClosing) open.push({ local, base });
  }

  const launchable = resources.filter((r) => r.href !== "");
  // SCORM CAM: <organizations default="…"> names the organization to launch; without it, the first.
  const organization =
    organizations.find((o) => o.identifier !== undefined && o.identifier === defaultOrganization) ?? organizations[0];
  const firstRef = organization?.firstRef;
  const referenced = firstRef === undefined ? undefined : launchable.find((r) => r.identifier === firstRef);
  const chosen = referenced ?? launchable.find((r) => r.sco) ?? launchable[0];
  return chosen && { href: chosen.href, bases: chosen.bases };
}
