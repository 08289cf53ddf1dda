import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createRegistryClient } from "../../gen/openapi/registry/client.js";
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

  it("reports the feed's advisories for the image's dpkg packages, worst first", async () => {
    const workspace = await ociWorkspace();
    const layout = join(workspace.dir, "debian");
    await buildImage(layout, "v1", [
      {
        "etc/os-release": 'ID=debian\nVERSION_ID="12"\nVERSION_CODENAME=bookworm\n',
        "var/lib/dpkg/status": DEBIAN_STATUS,
      },
      { "app/server.js": "console.log('hello')\n" },
    ]);
    const host = new URL(server.urls.registry!).host;
    await skopeo(workspace.policy, [
      "copy",
      "--dest-tls-verify=false",
      "--dest-creds",
      `x:${org.key}`,
      `oci:${layout}:v1`,
      `docker://${host}/${org.name}/app:v1`,
    ]);
    const client = createRegistryClient({ baseUrl: server.urls.registry!, token: org.key });
    let report = (await client.getVulnerabilities({ path: { org: org.name, repo: "app", reference: "v1" } })).body;
    for (let i = 0; i < 120 && report.scan_status !== "Success" && report.scan_status !== "Error"; i++) {
      await new Promise((resolve) => setTimeout(resolve, 500));
      report = (await client.getVulnerabilities({ path: { org: org.name, repo: "app", reference: "v1" } })).body;
    }
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
});
