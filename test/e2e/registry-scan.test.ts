import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createRegistryClient } from "../../gen/openapi/registry/client.js";
import { buildRpmDatabase } from "../../server/src/services/registry/scan/rpm-test-database.js";
import { DEBIAN_STATUS, TEST_FEED_DIR } from "../../server/src/services/registry/scan/scan-test-images.js";
import { buildImage, ociWorkspace, skopeo } from "./oci-tools.js";
import { runAdmin, startPlatformServer, type StartedServer } from "./platform-server.js";

/** A pushed image is scanned in the background against the advisory feed the server was given. */
describe("vulnerability scanning of pushed images", () => {
  let server: StartedServer;
  let org: { name: string; key: string };
  beforeAll(async () => {
    server = await startPlatformServer(["--registry-advisory-dir", TEST_FEED_DIR]);
    const created = await runAdmin(server.dataDir, ["create-org", "scanned"]);
    const { organization, apiKey } = created.json as { organization: { name: string }; apiKey: string };
    org = { name: organization.name, key: apiKey };
  });
  afterAll(async () => {
    await server?.stop();
  });

  /** Builds an image of `layers` with umoci, pushes it with skopeo and waits for its scan to end. */
  async function pushAndScan(repo: string, layers: Record<string, Uint8Array | string>[]) {
    const workspace = await ociWorkspace();
    const layout = join(workspace.dir, repo);
    await buildImage(layout, "v1", layers);
    const host = new URL(server.urls.registry!).host;
    await skopeo(workspace.policy, [
      "copy",
      "--dest-tls-verify=false",
      "--dest-creds",
      `x:${org.key}`,
      `oci:${layout}:v1`,
      `docker://${host}/${org.name}/${repo}:v1`,
    ]);
    const client = createRegistryClient({ baseUrl: server.urls.registry!, token: org.key });
    const path = { org: org.name, repo, reference: "v1" };
    let report = (await client.getVulnerabilities({ path })).body;
    for (let i = 0; i < 120 && report.scan_status !== "Success" && report.scan_status !== "Error"; i++) {
      await new Promise((resolve) => setTimeout(resolve, 500));
      report = (await client.getVulnerabilities({ path })).body;
    }
    return { client, report };
  }

  it("reports the feed's advisories for the image's dpkg packages, worst first", async () => {
    const { client, report } = await pushAndScan("app", [
      {
        "etc/os-release": 'ID=debian\nVERSION_ID="12"\nVERSION_CODENAME=bookworm\n',
        "var/lib/dpkg/status": DEBIAN_STATUS,
      },
      { "app/server.js": "console.log('hello')\n" },
    ]);
    expect(report.scan_status).toBe("Success");
    expect(report.total).toBeGreaterThan(0);
    expect(report.total).toBe(report.vulnerabilities.length);
    const openssl = report.vulnerabilities.find((v) => v.id === "TEST-DEB-0001")!;
    expect(openssl).toMatchObject({
      package: "libssl3",
      version: "3.0.11-1~deb12u2",
      fix_version: "3.0.15-1~deb12u1",
      severity: "Critical",
    });
    expect(openssl.links).toContain("https://security.example/TEST-DEB-0001");
    expect(report.severity).toBe(report.vulnerabilities[0]!.severity);
    expect(report.fixable).toBe(report.vulnerabilities.filter((v) => v.fix_version !== "").length);
    const artifacts = (await client.listArtifacts({ path: { org: org.name, repo: "app" }, query: {} })).body;
    expect(artifacts.items[0]!.scan_overview).toEqual({
      scan_status: "Success",
      severity: report.severity,
      total: report.total,
      fixable: report.fixable,
    });
  });

  it("reads an AlmaLinux image's rpm database", async () => {
    const rpmdb = await buildRpmDatabase([
      { name: "openssl", epoch: 1, version: "3.0.7", release: "24.el9", subpackages: ["libs"] },
    ]);
    const { report } = await pushAndScan("alma", [
      { "etc/os-release": 'ID="almalinux"\nVERSION_ID="9.3"\n', "var/lib/rpm/rpmdb.sqlite": rpmdb },
    ]);
    expect(report.scan_status).toBe("Success");
    expect(report.vulnerabilities.map((v) => [v.id, v.package, v.version, v.fix_version])).toEqual([
      ["TEST-ALMA-0001", "openssl-libs", "1:3.0.7-24.el9", "1:3.0.7-27.el9"],
      ["TEST-ALMA-0004", "openssl", "1:3.0.7-24.el9", ""],
      ["TEST-ALMA-0004", "openssl-libs", "1:3.0.7-24.el9", ""],
    ]);
    expect(report.severity).toBe("High");
  });
});
