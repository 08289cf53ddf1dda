// The messages, enums and client types of platform.data.ingest.v1, as the SDK's `ingestV1` namespace.
export * from "../../../gen/platform/data/ingest/v1/ingest_pb.js";
export * from "../../../gen/platform/data/ingest/v1/ingest_service_client.js";
export * from "../../../gen/platform/data/ingest/v1/ingest_service_pb.js";
