// The packagemanifests/icon subresource, as upstream serves it: the default channel's first
// icon, or a generic one.
import type { IncomingMessage, ServerResponse } from 'node:http';

/** Sends a package's icon (304 to a conditional request for a known resourceVersion). */
export function sendIcon(
  req: IncomingMessage,
  res: ServerResponse,
  icon: { base64data: string; mediatype: string; channel: string; csv: string } | null,
  name: string,
): void {
  if (
    req.headers['if-none-match'] !== undefined &&
    new URL(req.url ?? '/', 'https://x').searchParams.get('resourceVersion')
  ) {
    res.writeHead(304);
    res.end();
    return;
  }
  const body = icon === null ? Buffer.from(defaultIcon) : Buffer.from(icon.base64data, 'base64');
  res.writeHead(200, {
    'Content-Type': icon === null ? 'image/svg+xml' : icon.mediatype,
    'Content-Length': body.length,
    Etag: icon === null ? '' : `"${name}.${icon.channel}.${icon.csv}"`,
  });
  res.end(body);
}

// A neutral placeholder: a grey ring around a box.
const defaultIcon =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 64 64"><circle cx="32" cy="32" r="28" fill="none" stroke="#c8c8c8" stroke-width="6"/><rect x="22" y="22" width="20" height="20" rx="3" fill="#8d8d8f"/></svg>\n';
