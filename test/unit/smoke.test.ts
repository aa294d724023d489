import t from 'tap';
import { isJsonObject } from '../../shared/kube/json.js';

t.test('json - plain objects are json objects, arrays are not', (t) => {
  t.ok(isJsonObject({ a: 1 }));
  t.notOk(isJsonObject([1]));
  t.end();
});
