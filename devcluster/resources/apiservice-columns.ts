// The APIService columns of kube-aggregator's Table (registry/apiservice/etcd ConvertToTable):
// SERVICE and AVAILABLE, between NAME and AGE.
import { isJsonObject, text, type JsonObject } from '../../shared/kube/json.js';
import type { PrinterColumn } from './types.js';

/** `namespace/name` of spec.service, or `Local` for an APIService served by kube-apiserver. */
function serviceCell(apiService: JsonObject): string {
  const spec = apiService['spec'];
  const service = isJsonObject(spec) ? spec['service'] : undefined;
  if (!isJsonObject(service) || text(service['name']) === '') return 'Local';
  return `${text(service['namespace'])}/${text(service['name'])}`;
}

/**
 * The Available condition's status; when it is not True and has a reason, `<status> (<reason>)`;
 * `Unknown` with no such condition.
 */
function availableCell(apiService: JsonObject): string {
  const status = apiService['status'];
  const conditions = isJsonObject(status) ? status['conditions'] : undefined;
  const available = Array.isArray(conditions)
    ? conditions.find((c) => isJsonObject(c) && c['type'] === 'Available')
    : undefined;
  if (!isJsonObject(available)) return 'Unknown';
  const value = text(available['status']);
  const reason = text(available['reason']);
  return value === 'True' || reason === '' ? value : `${value} (${reason})`;
}

/** The columns after NAME and before AGE of `kubectl get apiservices`. */
export const apiServiceColumns: readonly PrinterColumn[] = [
  { name: 'Service', type: 'string', cell: serviceCell },
  {
    name: 'Available',
    type: 'string',
    description: 'Whether this service is available.',
    cell: availableCell,
  },
];
