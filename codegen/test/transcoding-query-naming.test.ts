import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { IngestServiceRoutes } from "../../gen/platform/data/ingest/v1/ingest_service_http.js";
import { IngestJobStatus } from "../../gen/platform/data/ingest/v1/ingest_pb.js";
import { ListIngestJobsRequestSchema } from "../../gen/platform/data/ingest/v1/ingest_service_pb.js";
import { PipelineServiceRoutes } from "../../gen/platform/data/pipeline/v1/pipeline_service_http.js";
import {
  ListPipelinesRequestSchema,
  ListPipelinesResponseSchema,
} from "../../gen/platform/data/pipeline/v1/pipeline_service_pb.js";
import { PipelineSchema } from "../../gen/platform/data/pipeline/v1/pipeline_pb.js";
import { SourceServiceRoutes } from "../../gen/platform/data/source/v1/source_service_http.js";
import {
  ListCredentialsRequestSchema,
  ListSourcesRequestSchema,
} from "../../gen/platform/data/source/v1/source_service_pb.js";
import type { Provider } from "../../gen/platform/data/source/v1/source_pb.js";
import { decodeRequest } from "../runtime/transcode/decode-request.js";
import { encodeResponse } from "../runtime/transcode/encode-response.js";
import type { HttpRoute } from "../runtime/http-route.js";

// The data listener's list routes read the query under the names their contract publishes
// (platform.api.v1.query_casing / query_parameter), and write every field of their answers.

const routeOf = (routes: readonly HttpRoute[], rpc: string): HttpRoute => routes.find((r) => r.rpc === rpc)!;
const decode = <S extends Parameters<typeof decodeRequest>[0]>(schema: S, route: HttpRoute, query: string) =>
  decodeRequest(schema, route, {
    captures: { bucket: "b1" },
    query: new URLSearchParams(query),
    body: new Uint8Array(),
  });

describe("query names declared by the contract", () => {
  const listPipelines = routeOf(PipelineServiceRoutes.routes, "listPipelines");
  const listJobs = routeOf(IngestServiceRoutes.routes, "listIngestJobs");
  const listSources = routeOf(SourceServiceRoutes.routes, "listSources");
  const listCredentials = routeOf(SourceServiceRoutes.routes, "listCredentials");

  it("reads the snake_case names of ListPipelines (and still the camelCase ones)", () => {
    const request = decode(ListPipelinesRequestSchema, listPipelines, "facet=Vector&store_entity_id=d1&free_only=true");
    expect(request).toMatchObject({ bucket: "b1", facet: "Vector", storeEntityId: "d1", freeOnly: true });
    expect(decode(ListPipelinesRequestSchema, listPipelines, "storeEntityId=d2").storeEntityId).toBe("d2");
  });

  it("ignores gRPC-only paging on the HTTP routes that return every row", () => {
    const request = decode(ListPipelinesRequestSchema, listPipelines, "page_size=5&pageToken=abc");
    expect(request.pageSize).toBe(0);
    expect(request.pageToken).toBe("");
    const sources = decode(ListSourcesRequestSchema, listSources, "page_size=5&page_token=t");
    expect(sources.pageSize).toBe(0);
    expect(sources.pageToken).toBe("");
  });

  it("still refuses a name that is no field", () => {
    expect(() => decode(ListPipelinesRequestSchema, listPipelines, "store_entity_kind=vector")).toThrow(
      'unknown query parameter "store_entity_kind"',
    );
  });

  it("reads status and its alias status_filter as one field of ListIngestJobs", () => {
    const status = IngestJobStatus.FAILED;
    const name = IngestJobStatus[status];
    expect(decode(ListIngestJobsRequestSchema, listJobs, `status=INGEST_JOB_STATUS_${name}`).status).toBe(status);
    expect(decode(ListIngestJobsRequestSchema, listJobs, `status_filter=INGEST_JOB_STATUS_${name}`).status).toBe(
      status,
    );
    expect(decode(ListIngestJobsRequestSchema, listJobs, `statusFilter=${status}`).status).toBe(status);
    expect(() => decode(ListIngestJobsRequestSchema, listJobs, `status=${status}&status_filter=${status}`)).toThrow(
      "is given more than once",
    );
    expect(decode(ListIngestJobsRequestSchema, listJobs, "pipelineId=p&ruleId=r&pageSize=3")).toMatchObject({
      pipelineId: "p",
      ruleId: "r",
      pageSize: 3,
    });
  });

  it("reads provider of ListCredentials as the enum number", () => {
    const request = decode(ListCredentialsRequestSchema, listCredentials, "source_id=s&provider=5");
    expect(request.sourceId).toBe("s");
    expect(request.provider).toBe(5 as Provider);
  });
});

describe("answers of the data listener's routes", () => {
  const listPipelines = routeOf(PipelineServiceRoutes.routes, "listPipelines");

  it("write unset message fields as null, at every depth", () => {
    const response = create(ListPipelinesResponseSchema, {
      pipelines: [create(PipelineSchema, { pipelineId: "p1", name: "free" })],
    });
    expect(encodeResponse(ListPipelinesResponseSchema, listPipelines, response)).toEqual({
      pipelines: [
        {
          pipelineId: "p1",
          bucket: "",
          name: "free",
          scriptTemplate: "",
          options: null,
          createdAt: "0",
          updatedAt: "0",
          destination: null,
        },
      ],
      pagination: null,
    });
  });

  it("leave them out on a route of the api listener", () => {
    const apiRoute: HttpRoute = { ...listPipelines, emitUnpopulated: undefined };
    const json = encodeResponse(ListPipelinesResponseSchema, apiRoute, create(ListPipelinesResponseSchema));
    expect(json).toEqual({ pipelines: [] });
  });
});
