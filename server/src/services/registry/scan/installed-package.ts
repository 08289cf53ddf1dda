/** One package installed in an image, as its package database records it. */
export interface InstalledPackage {
  /** The binary package name (what the report shows). */
  readonly name: string;
  readonly version: string;
  /** The package advisories name: Debian's source package, Alpine's origin. */
  readonly sourceName: string;
  /** The source package's version (Debian's `Source: name (version)`), else the package's own. */
  readonly sourceVersion: string;
}
