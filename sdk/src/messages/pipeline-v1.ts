// The messages, enums and client types of platform.data.pipeline.v1, as the SDK's `pipelineV1` namespace.
export * from "../../../gen/platform/data/pipeline/v1/pipeline_pb.js";
export * from "../../../gen/platform/data/pipeline/v1/pipeline_service_client.js";
export * from "../../../gen/platform/data/pipeline/v1/pipeline_service_pb.js";
