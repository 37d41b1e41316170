import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { listenerName } from '../modules/sensor/sensor-config.ts';
import { sensorConfigFrom } from './sensor.ts';

describe('umbra sensor flags', () => {
  it('should make --dot a DNS listener with TLS on, next to a plain --dns one', () => {
    const c = sensorConfigFrom({ proxyIp: '203.0.113.10', domain: ['decoy.example'], dns: ['5300=53'], dot: ['127.0.0.1:8853=853'] });
    assert.deepEqual(
      c.listeners.map((l) => [listenerName(l), l.protocol, l.protocol === 'dns' && l.tls, l.bind, l.port, l.public_port]),
      [
        ['dns-53', 'dns', false, '0.0.0.0', 5300, 53],
        ['dot-853', 'dns', true, '127.0.0.1', 8853, 853],
      ],
    );
    assert.throws(
      () => sensorConfigFrom({ proxyIp: '203.0.113.10', domain: ['decoy.example'], dot: ['8853'] }),
      /public_port 53, 853 or 5353/,
    );
  });
});
