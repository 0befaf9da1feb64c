/**
 * AdCP version negotiation of a tool call (spec "Versioning"; AdCP `core/version-envelope.json`): the service speaks
 * the releases {@link SUPPORTED_ADCP_VERSIONS}. A request's `adcp_version` (release precision, `3.2`, `3.1-beta`) is
 * served in the highest supported release of the same major that is not newer than it, or, when the caller pins a
 * newer release of a supported major, downshifted to our highest release of that major; another major is
 * `VERSION_UNSUPPORTED` (`details.supported_versions`). Without `adcp_version` the deprecated `adcp_major_version` is
 * honoured (its major's highest release); with neither, the highest release we speak.
 */
import { AdcpError } from './contract.ts';

/** The AdCP releases this service speaks, oldest first (capabilities `adcp.supported_versions`). */
export const SUPPORTED_ADCP_VERSIONS = ['3.0', '3.1'] as const;

/** The AdCP major versions this service speaks (capabilities `adcp.major_versions`). */
export const SUPPORTED_ADCP_MAJORS = [3] as const;

const RELEASE = /^(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-([a-zA-Z0-9](?:[a-zA-Z0-9.-]*[a-zA-Z0-9])?))?$/;

/** `VERSION_UNSUPPORTED` (`correctable`): the caller's major is not one we speak. */
function versionUnsupported(field: string, requested: string | number): AdcpError {
  return new AdcpError({
    code: 'VERSION_UNSUPPORTED',
    message: `AdCP ${requested} is not supported here; send adcp_version ${SUPPORTED_ADCP_VERSIONS.join(' or ')}.`,
    recovery: 'correctable',
    field,
    details: {
      requested_version: String(requested),
      supported_versions: [...SUPPORTED_ADCP_VERSIONS],
      supported_major_versions: [...SUPPORTED_ADCP_MAJORS],
    },
  });
}

/**
 * The release a call is answered in (module comment).
 * @param args the tool arguments (`adcp_version`, `adcp_major_version` are read when present and well-typed; the
 *   tool's input schema has already checked their types).
 * @returns a member of {@link SUPPORTED_ADCP_VERSIONS}.
 * @throws AdcpError `VERSION_UNSUPPORTED` for another major, or a malformed `adcp_version`.
 */
export function negotiateAdcpVersion(args: Record<string, unknown>): string {
  const pinned = args.adcp_version;
  if (typeof pinned === 'string') {
    const m = RELEASE.exec(pinned);
    if (!m) throw versionUnsupported('adcp_version', pinned);
    const major = Number(m[1]);
    const minor = Number(m[2]);
    const ofMajor = SUPPORTED_ADCP_VERSIONS.filter((v) => Number(v.split('.')[0]) === major);
    if (ofMajor.length === 0) throw versionUnsupported('adcp_version', pinned);
    // The highest release not newer than the pin (a pre-release `3.1-beta` is served as 3.1's predecessor, 3.0).
    const atMost = ofMajor.filter((v) => {
      const ours = Number(v.split('.')[1]);
      return m[3] === undefined ? ours <= minor : ours < minor;
    });
    return atMost.at(-1) ?? ofMajor[0]!;
  }
  const major = args.adcp_major_version;
  if (typeof major === 'number') {
    const ofMajor = SUPPORTED_ADCP_VERSIONS.filter((v) => Number(v.split('.')[0]) === major);
    if (ofMajor.length === 0) throw versionUnsupported('adcp_major_version', major);
    return ofMajor.at(-1)!;
  }
  return SUPPORTED_ADCP_VERSIONS.at(-1)!;
}
