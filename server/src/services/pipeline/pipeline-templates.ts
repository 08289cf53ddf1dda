import { create } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import {
  PipelineFacet,
  PipelineTemplateSchema,
  TemplateVectorContractSchema,
  type PipelineTemplate,
} from "../../../../gen/platform/data/pipeline/v1/pipeline_pb.js";
import type {
  GetTemplateRequest,
  ListTemplatesRequest,
  ListTemplatesResponse,
} from "../../../../gen/platform/data/pipeline/v1/pipeline_service_pb.js";
import { ListTemplatesResponseSchema } from "../../../../gen/platform/data/pipeline/v1/pipeline_service_pb.js";
import type { TemplateInfo } from "../../../../gen/platform/script/v1/catalog_pb.js";
import { searchTemplateOf } from "./pipeline-creators.js";
import { notFound, parseFacet, requireText } from "./pipeline-messages.js";
import type { StoredFacet } from "./pipeline-schema.js";
import {
  fetchAllTemplates,
  fetchTemplate,
  inputsSchemaOf,
  labelOf,
  vectorFactsOf,
  type TemplateSource,
} from "./template-facts.js";

const FACET_LABELS: Record<string, PipelineFacet> = {
  vector: PipelineFacet.VECTOR,
  table: PipelineFacet.TABLE,
  object: PipelineFacet.OBJECT,
  graph: PipelineFacet.GRAPH,
};

/**
 * ListTemplates and GetTemplate of the pipeline catalog: the script service's templates seen as
 * pipeline templates. A template whose contract resolves vector facts has the vector facet; one
 * with a `facet` label has that facet; the rest have none. Filtering by the vector facet keeps
 * only index templates (those a collection can be created from), not their search pairs.
 */
export function createTemplateBrowser(templates: TemplateSource) {
  return {
    async listTemplates(request: ListTemplatesRequest, context: HandlerContext): Promise<ListTemplatesResponse> {
      const facet = parseFacet(request.facet);
      const all = await fetchAllTemplates(
        templates,
        { category: request.category.trim(), search: request.search.trim() },
        context,
      );
      const listed = all.map(toPipelineTemplate).filter((template) => matchesFacet(template, facet));
      return create(ListTemplatesResponseSchema, { templates: listed });
    },

    async getTemplate(request: GetTemplateRequest, context: HandlerContext): Promise<PipelineTemplate> {
      const id = requireText(request.templateId, "template_id");
      const template = await fetchTemplate(templates, id, context);
      if (!template) throw notFound(`template "${id}"`);
      return toPipelineTemplate(template);
    },
  };
}

function matchesFacet(template: PipelineTemplate, facet: StoredFacet | undefined): boolean {
  if (facet === undefined) return true;
  if (template.facet !== FACET_LABELS[facet]) return false;
  return facet !== "vector" || isIndexTemplate(template);
}

function isIndexTemplate(template: PipelineTemplate): boolean {
  const stage = template.labels["stage"];
  return stage !== undefined ? stage === "index" : template.templateId.endsWith("_index");
}

export function toPipelineTemplate(info: TemplateInfo): PipelineTemplate {
  const inputs = inputsSchemaOf(info);
  const facts = inputs ? vectorFactsOf(info, inputs) : undefined;
  const labels = Object.fromEntries(info.labels.map((label) => [label.key, label.value]));
  const declared = FACET_LABELS[labelOf(info, "facet").toLowerCase()];
  const template = create(PipelineTemplateSchema, {
    templateId: info.id,
    name: info.name,
    description: info.description,
    category: info.category,
    facet: facts ? PipelineFacet.VECTOR : (declared ?? PipelineFacet.UNSPECIFIED),
    labels,
    inputSchema: inputs,
    vector: facts
      ? create(TemplateVectorContractSchema, {
          embedModel: facts.embedModel,
          dimensions: facts.dimensions,
          distanceMetric: facts.distanceMetric,
          sparseMode: facts.sparseMode,
          embeddingType: facts.embeddingType,
          modality: facts.modality,
        })
      : undefined,
  });
  if (facts && isIndexTemplate(template)) {
    template.searchTemplateId = labelOf(info, "search_template") || searchTemplateOf(info.id);
  }
  return template;
}
