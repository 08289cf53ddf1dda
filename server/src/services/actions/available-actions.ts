import { create } from "@bufbuild/protobuf";
import { AvailableActionSchema, type AvailableAction } from "../../../../gen/platform/data/actions/v1/action_pb.js";
import type { ActionCatalog } from "./create-action-runner.js";
import { paramsForm } from "./params-contract.js";
import { selectionMismatch, type ResolvedSelection } from "./selection-adaptation.js";

/**
 * ListAvailableActions: the catalog actions that take the selection (its pillar, its shape, the
 * content type or extension of every selected object), optionally narrowed by a case-insensitive
 * search over id, name and description. An action whose template is not served is left out.
 */
export async function availableActions(
  catalog: ActionCatalog,
  selection: ResolvedSelection,
  search: string,
): Promise<AvailableAction[]> {
  const needle = search.trim().toLowerCase();
  const fitting = catalog.actions.filter((action) => {
    if (selectionMismatch(action, selection) !== undefined) return false;
    if (needle === "") return true;
    return [action.id, action.name, action.description].some((text) => text.toLowerCase().includes(needle));
  });
  const listed = await Promise.all(
    fitting.map(async (action) => {
      const template = await catalog.template(action).catch(() => undefined);
      if (!template) return undefined;
      return create(AvailableActionSchema, {
        actionId: action.id,
        name: action.name,
        description: action.description || template.description,
        icon: action.icon,
        visibility: action.visibility,
        invoke: action.invoke,
        paramsForm: paramsForm(template, new Set(Object.keys(action.bind))),
        acceptedContentTypes: [...action.acceptedContentTypes],
        acceptedExtensions: [...action.acceptedExtensions],
      });
    }),
  );
  return listed.filter((action): action is AvailableAction => action !== undefined);
}
