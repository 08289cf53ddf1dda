import { Code, ConnectError } from "@connectrpc/connect";
import { VectorMetric } from "../../../../../gen/platform/data/vector/v1/vector_data_service_pb.js";

/** What pgvector needs to know of a metric: its distance operator and its HNSW operator class. */
export interface MetricSql {
  readonly metric: VectorMetric;
  /** `<=>` cosine distance, `<->` L2 distance, `<#>` negative inner product. */
  readonly operator: "<=>" | "<->" | "<#>";
  readonly operatorClass: "vector_cosine_ops" | "vector_l2_ops" | "vector_ip_ops";
  /** Suffix of the index name, `<table>__hnsw_<suffix>`. */
  readonly indexSuffix: "cosine" | "l2" | "ip";
}

/** The three metrics, in the order reported by DescribeVectorTable. */
export const METRICS: readonly MetricSql[] = [
  { metric: VectorMetric.COSINE, operator: "<=>", operatorClass: "vector_cosine_ops", indexSuffix: "cosine" },
  { metric: VectorMetric.EUCLIDEAN, operator: "<->", operatorClass: "vector_l2_ops", indexSuffix: "l2" },
  { metric: VectorMetric.DOT_PRODUCT, operator: "<#>", operatorClass: "vector_ip_ops", indexSuffix: "ip" },
];

/** The metric of a request; the zero value is not a metric and is refused rather than guessed. */
export function metricSql(metric: VectorMetric): MetricSql {
  const found = METRICS.find((candidate) => candidate.metric === metric);
  if (!found)
    throw new ConnectError(
      "metric is required: VECTOR_METRIC_COSINE, VECTOR_METRIC_EUCLIDEAN or VECTOR_METRIC_DOT_PRODUCT",
      Code.InvalidArgument,
    );
  return found;
}
