// Validation of spec.conversion: strategy None or Webhook, and a webhook's client config and
// review versions, worded and addressed as kube-apiserver reports them.
import type { JsonObject } from '../json.js';
import type { FieldCause } from './types.js';
import {
  childPath,
  forbidden,
  goStringSlice,
  indexPath,
  invalid,
  invalidTyped,
  notSupported,
  required,
} from './cause.js';
import { objectAt, stringAt, stringsAt } from './crd-fields.js';
import { dns1035LabelErrors } from './dns-names.js';

const acceptedConversionReviewVersions = ['v1', 'v1beta1'];

function validateWebhookClientConfig(config: JsonObject, path: string, out: FieldCause[]): void {
  const url = config.url;
  const service = objectAt(config.service);
  if ((url === undefined) === (service === undefined)) {
    out.push(required(path, 'exactly one of url or service is required'));
    return;
  }
  if (typeof url === 'string') {
    const urlPath = childPath(path, 'url');
    let parsed: URL | undefined;
    try {
      parsed = new URL(url);
    } catch {
      out.push(invalid(urlPath, url, 'host must be specified'));
    }
    if (parsed !== undefined) {
      if (parsed.protocol !== 'https:')
        out.push(invalid(urlPath, url, "'https' is the only allowed URL scheme"));
      if (parsed.host === '') out.push(invalid(urlPath, url, 'host must be specified'));
      if (parsed.username !== '' || parsed.password !== '') {
        out.push(invalid(urlPath, url, 'user information is not permitted in the URL'));
      }
      if (parsed.hash !== '')
        out.push(invalid(urlPath, url, 'fragments are not permitted in the URL'));
      if (parsed.search !== '')
        out.push(invalid(urlPath, url, 'query parameters are not permitted in the URL'));
    }
  }
  if (service !== undefined) {
    const servicePath = childPath(path, 'service');
    if (stringAt(service.name) === '')
      out.push(required(childPath(servicePath, 'name'), 'service name is required'));
    if (stringAt(service.namespace) === '') {
      out.push(required(childPath(servicePath, 'namespace'), 'service namespace is required'));
    }
    const servicePathValue = service.path;
    if (
      typeof servicePathValue === 'string' &&
      servicePathValue !== '' &&
      !servicePathValue.startsWith('/')
    ) {
      out.push(invalid(childPath(servicePath, 'path'), servicePathValue, "must start with a '/'"));
    }
    const port = service.port;
    if (typeof port === 'number' && (port < 1 || port > 65535 || !Number.isInteger(port))) {
      out.push(
        invalid(
          childPath(servicePath, 'port'),
          port,
          'port is not valid: must be between 1 and 65535, inclusive',
        ),
      );
    }
  }
}

/** spec.conversion, reported under kube's internal field names (webhookClientConfig...). */
export function validateConversion(
  conversion: JsonObject | undefined,
  preserveUnknownFields: boolean,
  path: string,
  out: FieldCause[],
): void {
  if (conversion === undefined) return;
  const strategy = conversion.strategy === undefined ? 'None' : stringAt(conversion.strategy);
  const webhook = objectAt(conversion.webhook);
  const clientConfig = objectAt(webhook?.clientConfig);
  const reviewVersions = stringsAt(webhook?.conversionReviewVersions);
  if (strategy !== 'None' && strategy !== 'Webhook') {
    out.push(notSupported(childPath(path, 'strategy'), strategy, ['None', 'Webhook']));
    return;
  }
  if (strategy === 'Webhook') {
    if (clientConfig === undefined) {
      out.push(
        required(
          childPath(path, 'webhookClientConfig'),
          'required when strategy is set to Webhook',
        ),
      );
    } else {
      validateWebhookClientConfig(clientConfig, childPath(path, 'webhookClientConfig'), out);
    }
    const versionsPath = childPath(path, 'conversionReviewVersions');
    if (reviewVersions.length === 0) {
      out.push(required(versionsPath, ''));
    } else {
      const seen = new Set<string>();
      reviewVersions.forEach((v, i) => {
        if (seen.has(v)) {
          out.push(invalid(indexPath(versionsPath, i), v, 'duplicate version'));
          return;
        }
        seen.add(v);
        for (const msg of dns1035LabelErrors(v))
          out.push(invalid(indexPath(versionsPath, i), v, msg));
      });
      if (!reviewVersions.some((v) => acceptedConversionReviewVersions.includes(v))) {
        out.push(
          invalidTyped(
            versionsPath,
            goStringSlice(reviewVersions),
            `must include at least one of ${acceptedConversionReviewVersions.join(', ')}`,
          ),
        );
      }
    }
    if (preserveUnknownFields) {
      out.push(
        invalid(
          childPath(path, 'strategy'),
          strategy,
          'must be None if spec.preserveUnknownFields is true',
        ),
      );
    }
  } else {
    if (clientConfig !== undefined) {
      out.push(
        forbidden(
          childPath(path, 'webhookClientConfig'),
          'should not be set when strategy is not set to Webhook',
        ),
      );
    }
    if (reviewVersions.length > 0) {
      out.push(
        forbidden(
          childPath(path, 'conversionReviewVersions'),
          'should not be set when strategy is not set to Webhook',
        ),
      );
    }
  }
}
