import { execFile } from "node:child_process";
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);

/** A source package to build: its main package and, for each of `subpackages`, `<name>-<suffix>`. */
export interface RpmSourcePackage {
  readonly name: string;
  readonly epoch?: number;
  readonly version: string;
  readonly release: string;
  readonly subpackages?: readonly string[];
  /** Files each package installs: many make a header larger than a database page. */
  readonly files?: number;
}

/**
 * A real rpm database (`rpmdb.sqlite`) holding the packages built from `sources`: each is built
 * with rpmbuild and recorded with `rpm --justdb`, as an image build's package manager records
 * them. Needs Debian's `rpm` package.
 */
export async function buildRpmDatabase(sources: readonly RpmSourcePackage[]): Promise<Buffer> {
  const work = await mkdtemp(join(tmpdir(), "rpmdb-"));
  try {
    const rpms = join(work, "rpms");
    for (const source of sources) {
      const spec = join(work, `${source.name}.spec`);
      await writeFile(spec, specOf(source));
      await run("rpmbuild", [
        "--quiet",
        "--define",
        `_topdir ${join(work, "top")}`,
        "--define",
        `_rpmdir ${rpms}`,
        "-bb",
        spec,
      ]);
    }
    const built = (await readdir(rpms, { recursive: true })).filter((f) => f.endsWith(".rpm"));
    const db = join(work, "db");
    await mkdir(db);
    await run("rpm", ["--dbpath", db, "--initdb"]);
    await run("rpm", [
      "--dbpath",
      db,
      "-i",
      "--justdb",
      "--nodeps",
      "--ignorearch",
      "--ignoreos",
      ...built.map((f) => join(rpms, f)),
    ]);
    return await readFile(join(db, "rpmdb.sqlite"));
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

/**
 * The database and its write-ahead log as a process that ran `statements` and has not closed
 * the database leaves them (nothing checkpointed), read with the sqlite3 shell.
 */
export async function withUncheckpointedLog(
  database: Buffer,
  statements: string,
): Promise<{ file: Buffer; wal: Buffer }> {
  const work = await mkdtemp(join(tmpdir(), "rpmdb-wal-"));
  try {
    const path = join(work, "rpmdb.sqlite");
    await writeFile(path, database);
    const snapshot = join(work, "snapshot");
    await mkdir(snapshot);
    await run("sqlite3", [
      path,
      "PRAGMA journal_mode=WAL;",
      "PRAGMA wal_autocheckpoint=0;",
      statements,
      `.shell cp ${path} ${path}-wal ${snapshot}/`,
    ]);
    return {
      file: await readFile(join(snapshot, "rpmdb.sqlite")),
      wal: await readFile(join(snapshot, "rpmdb.sqlite-wal")),
    };
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

function specOf(source: RpmSourcePackage): string {
  const packages = [
    { suffix: "", folder: source.name },
    ...(source.subpackages ?? []).map((suffix) => ({ suffix, folder: `${source.name}-${suffix}` })),
  ];
  const files = source.files ?? 1;
  return [
    `Name: ${source.name}`,
    ...(source.epoch === undefined ? [] : [`Epoch: ${source.epoch}`]),
    `Version: ${source.version}`,
    `Release: ${source.release}`,
    "Summary: test package",
    "License: MIT",
    "BuildArch: noarch",
    "%description",
    "A package of the scanner's tests.",
    ...(source.subpackages ?? []).flatMap((suffix) => [
      `%package ${suffix}`,
      `Summary: test package ${suffix}`,
      `%description ${suffix}`,
      "A package of the scanner's tests.",
    ]),
    "%install",
    ...packages.map(
      ({ folder }) =>
        `mkdir -p %{buildroot}/usr/share/${folder} && for i in $(seq 1 ${files}); do echo $i > %{buildroot}/usr/share/${folder}/file-$i; done`,
    ),
    ...packages.flatMap(({ suffix, folder }) => [`%files ${suffix}`.trim(), `/usr/share/${folder}`]),
    "",
  ].join("\n");
}
