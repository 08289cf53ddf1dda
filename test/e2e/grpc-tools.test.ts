import { execFile } from "node:child_process";
import { join } from "node:path";
import { create, fromBinary, toBinary, type DescMessage, type MessageInitShape } from "@bufbuild/protobuf";
import { FileDescriptorProtoSchema } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createGrpcTransport, createGrpcWebTransport } from "@connectrpc/connect-node";
import * as grpc from "@grpc/grpc-js";
import { request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  HealthCheckRequestSchema,
  HealthCheckResponse_ServingStatus as ServingStatus,
  HealthCheckResponseSchema,
  type HealthCheckRequest,
  type HealthCheckResponse,
} from "../../gen/grpc/health/v1/health_pb.js";
import {
  ServerReflection as ServerReflectionV1alpha,
  type ServerReflectionRequestSchema,
  type ServerReflectionResponse,
} from "../../gen/grpc/reflection/v1alpha/reflection_pb.js";
import { BuildService } from "../../gen/platform/compute/v1/build_service_pb.js";
import { repoRoot, startPlatformServer } from "./platform-server.js";
import { apiUrl, createOrganization, type TestOrganization } from "./shared-server.js";

// gRPC tools work against the binary with no local .proto file: they learn the contract from
// server reflection, probe grpc.health.v1.Health, and hear UNIMPLEMENTED for a method nobody serves.

const bufBinary = join(repoRoot, "node_modules/.bin/buf");

/** `buf curl` over gRPC (h2c) against the shared server, reflection only (no --schema). */
function bufCurl(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      bufBinary,
      ["curl", "--protocol", "grpc", "--http2-prior-knowledge", ...args],
      { cwd: "/", timeout: 30_000 },
      (error, stdout, stderr) => {
        resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr });
      },
    );
  });
}

function grpcMethod<I extends DescMessage, O extends DescMessage>(
  path: string,
  input: I,
  output: O,
  responseStream: boolean,
) {
  return {
    path,
    requestStream: false,
    responseStream,
    requestSerialize: (message: MessageInitShape<I>) => Buffer.from(toBinary(input, create(input, message))),
    requestDeserialize: (bytes: Buffer) => fromBinary(input, bytes),
    responseSerialize: (message: MessageInitShape<O>) => Buffer.from(toBinary(output, create(output, message))),
    responseDeserialize: (bytes: Buffer) => fromBinary(output, bytes),
  };
}

/** grpc.health.v1.Health for @grpc/grpc-js, from our generated message schemas. */
const HealthClient = grpc.makeGenericClientConstructor(
  {
    Check: grpcMethod("/grpc.health.v1.Health/Check", HealthCheckRequestSchema, HealthCheckResponseSchema, false),
    Watch: grpcMethod("/grpc.health.v1.Health/Watch", HealthCheckRequestSchema, HealthCheckResponseSchema, true),
  },
  "Health",
);
interface HealthClient extends grpc.Client {
  Check(
    request: Partial<HealthCheckRequest>,
    callback: grpc.requestCallback<HealthCheckResponse>,
  ): grpc.ClientUnaryCall;
  Watch(request: Partial<HealthCheckRequest>): grpc.ClientReadableStream<HealthCheckResponse>;
}

const target = (url: string) => new URL(url).host;
const healthClient = (url: string) =>
  new HealthClient(target(url), grpc.credentials.createInsecure()) as unknown as HealthClient;

function check(client: HealthClient, service: string): Promise<ServingStatus> {
  return new Promise((resolve, reject) =>
    client.Check({ service }, (error, response) => (error ? reject(error) : resolve(response!.status))),
  );
}

/**
 * The statuses a Watch stream sends until it ends, or until `until` says stop (then it is
 * cancelled). `onData` hears each one as it comes.
 */
function watch(
  client: HealthClient,
  service: string,
  until: (seen: ServingStatus[]) => boolean,
  onData: (status: ServingStatus) => void = () => {},
): Promise<{ seen: ServingStatus[]; end: grpc.ServiceError | "end" | "cancelled" }> {
  return new Promise((resolve) => {
    const seen: ServingStatus[] = [];
    const call = client.Watch({ service });
    let done = false;
    call.on("data", (response: HealthCheckResponse) => {
      seen.push(response.status);
      onData(response.status);
      if (!done && until(seen)) {
        done = true;
        call.cancel();
        resolve({ seen, end: "cancelled" });
      }
    });
    call.on("error", (error: grpc.ServiceError) => {
      if (!done) resolve({ seen, end: error });
      done = true;
    });
    call.on("end", () => {
      if (!done) resolve({ seen, end: "end" });
      done = true;
    });
  });
}

/** A unary call of any path with an empty message, answered by whatever the server says. */
function callRaw(client: grpc.Client, path: string): Promise<grpc.ServiceError | undefined> {
  const empty = () => Buffer.alloc(0);
  return new Promise((resolve) =>
    client.makeUnaryRequest(
      path,
      empty,
      (bytes: Buffer) => bytes,
      {},
      (error) => resolve(error ?? undefined),
    ),
  );
}

let acme: TestOrganization;
let health: HealthClient;
beforeAll(async () => {
  acme = await createOrganization("grpc");
  health = healthClient(apiUrl());
});
afterAll(() => health.close());

describe("buf curl with server reflection", () => {
  it("lists every service and method, the API's and the protocol services", async () => {
    const services = await bufCurl(["--list-services", apiUrl()]);
    expect(services.stderr).toBe("");
    expect(services.stdout.trim().split("\n")).toEqual([
      "grpc.health.v1.Health",
      "grpc.reflection.v1.ServerReflection",
      "grpc.reflection.v1alpha.ServerReflection",
      "platform.compute.v1.SecretService",
      "platform.iam.v1.IamService",
      "platform.script.v1.ScriptService",
    ]);
    const methods = await bufCurl(["--list-methods", apiUrl()]);
    expect(methods.code).toBe(0);
    const lines = methods.stdout.trim().split("\n");
    for (const method of [
      "platform.script.v1.ScriptService/SetEnvVar",
      "platform.script.v1.ScriptService/WatchThread",
      "platform.compute.v1.SecretService/GetSecret",
      "grpc.health.v1.Health/Watch",
    ]) {
      expect(lines).toContain(method);
    }
  });

  it("calls real methods, learning their messages by reflection", async () => {
    const headers = ["-H", `authorization: ${acme.headers.authorization}`, "-H", `x-organization-name: ${acme.name}`];
    const set = await bufCurl([
      ...headers,
      "-d",
      JSON.stringify({ key: "FROM_BUF_CURL", value: "reflected" }),
      `${apiUrl()}/platform.script.v1.ScriptService/SetEnvVar`,
    ]);
    expect(set.stderr).toBe("");
    expect(set.code).toBe(0);
    const got = await bufCurl([
      ...headers,
      "-d",
      JSON.stringify({ key: "FROM_BUF_CURL" }),
      `${apiUrl()}/platform.script.v1.ScriptService/GetEnvVar`,
    ]);
    expect(got.code).toBe(0);
    expect(JSON.parse(got.stdout)).toMatchObject({ value: "reflected" });
    // A message field the contract does not have is caught by the client from the reflected schema.
    const wrong = await bufCurl([
      ...headers,
      "-d",
      JSON.stringify({ nokey: "x" }),
      `${apiUrl()}/platform.script.v1.ScriptService/GetEnvVar`,
    ]);
    expect(wrong.code).not.toBe(0);
    expect(wrong.stderr).toContain("nokey");
  });

  it("needs no credential for reflection and health, and still wants one for the API", async () => {
    const check = await bufCurl(["-d", "{}", `${apiUrl()}/grpc.health.v1.Health/Check`]);
    expect(JSON.parse(check.stdout)).toEqual({ status: "SERVING" });
    const secrets = await bufCurl(["-d", "{}", `${apiUrl()}/platform.compute.v1.SecretService/ListSecrets`]);
    expect(secrets.code).not.toBe(0);
    expect(secrets.stderr).toContain("unauthenticated");
  });
});

describe("grpc.health.v1.Health from @grpc/grpc-js", () => {
  it("answers SERVING for the server and each served service, NOT_FOUND for another name", async () => {
    expect(await check(health, "")).toBe(ServingStatus.SERVING);
    expect(await check(health, "platform.script.v1.ScriptService")).toBe(ServingStatus.SERVING);
    expect(await check(health, "grpc.health.v1.Health")).toBe(ServingStatus.SERVING);
    await expect(check(health, "platform.compute.v1.BuildService")).rejects.toMatchObject({
      code: grpc.status.NOT_FOUND,
    });
  });

  it("streams the status in Watch, SERVICE_UNKNOWN for a name not served", async () => {
    expect(await watch(health, "", (seen) => seen.length === 1)).toEqual({
      seen: [ServingStatus.SERVING],
      end: "cancelled",
    });
    expect(await watch(health, "no.such.Service", (seen) => seen.length === 1)).toEqual({
      seen: [ServingStatus.SERVICE_UNKNOWN],
      end: "cancelled",
    });
  });
});

describe("a method nobody serves", () => {
  it("is UNIMPLEMENTED for @grpc/grpc-js, whether the service or only the method is unknown", async () => {
    const client = new grpc.Client(target(apiUrl()), grpc.credentials.createInsecure());
    try {
      const noMethod = await callRaw(client, "/platform.script.v1.ScriptService/NoSuchMethod");
      expect([noMethod?.code, noMethod?.details]).toEqual([
        grpc.status.UNIMPLEMENTED,
        "method NoSuchMethod is not implemented by service platform.script.v1.ScriptService",
      ]);
      const noService = await callRaw(client, "/platform.compute.v1.BuildService/GetBuild");
      expect([noService?.code, noService?.details]).toEqual([
        grpc.status.UNIMPLEMENTED,
        "service platform.compute.v1.BuildService is not served here",
      ]);
    } finally {
      client.close();
    }
  });

  it("is UNIMPLEMENTED over gRPC-web, and still a 404 over Connect and plain HTTP", async () => {
    const builds = createClient(BuildService, createGrpcWebTransport({ baseUrl: apiUrl(), httpVersion: "1.1" }));
    const error = await builds.getBuild({}).catch((e: unknown) => ConnectError.from(e));
    expect(error).toMatchObject({
      code: Code.Unimplemented,
      rawMessage: "service platform.compute.v1.BuildService is not served here",
    });
    const connect = await request(`${apiUrl()}/platform.compute.v1.BuildService/GetBuild`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}",
    });
    expect(connect.statusCode).toBe(404);
    expect(connect.headers["grpc-status"]).toBeUndefined();
    await connect.body.dump();
  });
});

describe("grpc.reflection.v1alpha", () => {
  /** One stream, the requests in order; the answers in the same order. */
  async function reflect(
    requests: MessageInitShape<typeof ServerReflectionRequestSchema>[],
  ): Promise<ServerReflectionResponse[]> {
    const client = createClient(ServerReflectionV1alpha, createGrpcTransport({ baseUrl: apiUrl() }));
    const answers: ServerReflectionResponse[] = [];
    for await (const answer of client.serverReflectionInfo(
      (async function* () {
        yield* requests;
      })(),
    )) {
      answers.push(answer);
    }
    return answers;
  }
  const fileNames = (answer: ServerReflectionResponse) =>
    answer.messageResponse.case === "fileDescriptorResponse"
      ? answer.messageResponse.value.fileDescriptorProto.map(
          (bytes) => fromBinary(FileDescriptorProtoSchema, bytes).name,
        )
      : [];

  it("lists services and serves the files of symbols, names and extensions with their dependencies", async () => {
    const [list, symbol, method, byName, extension, numbers] = await reflect([
      { host: "h", messageRequest: { case: "listServices", value: "" } },
      { messageRequest: { case: "fileContainingSymbol", value: "platform.script.v1.ScriptService" } },
      { messageRequest: { case: "fileContainingSymbol", value: "platform.script.v1.ScriptService.GetEnvVar" } },
      { messageRequest: { case: "fileByFilename", value: "platform/compute/v1/secret_service.proto" } },
      // google.api.http, the extension every routed method carries.
      {
        messageRequest: {
          case: "fileContainingExtension",
          value: { containingType: "google.protobuf.MethodOptions", extensionNumber: 72295728 },
        },
      },
      { messageRequest: { case: "allExtensionNumbersOfType", value: "google.protobuf.MethodOptions" } },
    ]);
    expect(list!.validHost).toBe("h");
    expect(list!.originalRequest?.messageRequest.case).toBe("listServices");
    expect(
      list!.messageResponse.case === "listServicesResponse" && list!.messageResponse.value.service.map((s) => s.name),
    ).toContain("platform.script.v1.ScriptService");

    const scriptFiles = fileNames(symbol!);
    expect(scriptFiles[0]).toBe("platform/script/v1/script_service.proto");
    // Transitive: script_service imports google/api/annotations.proto, which imports http.proto and descriptor.proto.
    expect(scriptFiles).toEqual(
      expect.arrayContaining([
        "google/api/annotations.proto",
        "google/api/http.proto",
        "google/protobuf/descriptor.proto",
      ]),
    );
    expect(new Set(scriptFiles).size).toBe(scriptFiles.length);
    expect(fileNames(method!)[0]).toBe("platform/script/v1/script_service.proto");
    expect(fileNames(byName!)[0]).toBe("platform/compute/v1/secret_service.proto");
    expect(fileNames(extension!)[0]).toBe("google/api/annotations.proto");
    expect(
      numbers!.messageResponse.case === "allExtensionNumbersResponse" && numbers!.messageResponse.value.extensionNumber,
    ).toContain(72295728);
  });

  it("answers NOT_FOUND in an error response for what it does not know, and keeps the stream", async () => {
    const answers = await reflect([
      { messageRequest: { case: "fileByFilename", value: "no/such/file.proto" } },
      { messageRequest: { case: "fileContainingSymbol", value: "no.such.Symbol" } },
      {
        messageRequest: {
          case: "fileContainingExtension",
          value: { containingType: "google.protobuf.MethodOptions", extensionNumber: 1 },
        },
      },
      { messageRequest: { case: "allExtensionNumbersOfType", value: "no.such.Message" } },
      { messageRequest: { case: "listServices", value: "" } },
    ]);
    expect(
      answers.map((a) =>
        a.messageResponse.case === "errorResponse" ? a.messageResponse.value.errorCode : a.messageResponse.case,
      ),
    ).toEqual([5, 5, 5, 5, "listServicesResponse"]);
    expect(answers[0]!.messageResponse.case === "errorResponse" && answers[0]!.messageResponse.value.errorMessage).toBe(
      'file "no/such/file.proto" is not known to this server',
    );
  });
});

describe("health while the server stops", () => {
  it("turns NOT_SERVING for watchers when shutdown begins", async () => {
    const server = await startPlatformServer();
    const client = healthClient(server.urls.api!);
    try {
      let firstStatus!: () => void;
      const first = new Promise<void>((resolve) => (firstStatus = resolve));
      const watching = watch(
        client,
        "",
        () => false,
        () => firstStatus(),
      );
      await first;
      expect(await check(client, "")).toBe(ServingStatus.SERVING);
      const code = await server.stop();
      expect(code).toBe(0);
      const { seen } = await watching;
      expect(seen).toEqual([ServingStatus.SERVING, ServingStatus.NOT_SERVING]);
    } finally {
      client.close();
      if (server.process.exitCode === null) server.process.kill("SIGKILL");
    }
  }, 120_000);
});
