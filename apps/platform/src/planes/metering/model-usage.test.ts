import { describe, expect, it } from 'vitest';
import { modelUsageSamples, type MeteredModelCall } from './model-usage.js';

const HOUR = 3_600_000;
const call = (id: string, at: number, prompt: number, completion: number, model = 'm'): MeteredModelCall => ({
  requestId: id,
  at,
  accountId: 'acc',
  workspace: 'ws',
  model,
  modelUuid: `uuid-${model}`,
  status: 200,
  usage: { prompt, completion },
});

describe('model usage samples', () => {
  it('sums a batch per model and UTC hour, one sample per dimension, each within its hour', () => {
    const t = 10 * HOUR;
    const samples = modelUsageSamples([
      call('a', t + 5, 3, 4),
      call('b', t + HOUR - 1, 1, 1),
      call('c', t + HOUR + 2, 10, 0),
      call('d', t + 7, 2, 2, 'other'),
    ]);
    const of = (model: string, hour: number, dim: string) =>
      samples.find(
        (s) =>
          s.resourceName === model &&
          Date.parse(s.startAt) >= hour &&
          Date.parse(s.startAt) < hour + HOUR &&
          s.dimension === dim,
      )?.quantity;
    expect(of('m', t, 'model_input_tokens_count')).toBe(4);
    expect(of('m', t, 'model_output_tokens_count')).toBe(5);
    expect(of('m', t, 'model_requests_count')).toBe(2);
    expect(of('m', t + HOUR, 'model_input_tokens_count')).toBe(10);
    expect(of('m', t + HOUR, 'model_output_tokens_count')).toBeUndefined(); // 0 is not written
    expect(of('other', t, 'model_requests_count')).toBe(1);
    for (const s of samples)
      expect(Math.floor(Date.parse(s.startAt) / HOUR)).toBe(Math.floor((Date.parse(s.endAt) - 1) / HOUR));
  });

  it('keys a sample by the calls it sums: the same batch again has the same keys, another batch others', () => {
    const batch = [call('a', 5, 1, 1), call('b', 6, 1, 1)];
    const keys = (b: MeteredModelCall[]) => modelUsageSamples(b).map((s) => s.idempotencyKey);
    expect(keys(batch)).toEqual(keys([...batch]));
    expect(keys([call('c', 5, 1, 1), call('d', 6, 1, 1)])).not.toEqual(keys(batch));
  });
});
