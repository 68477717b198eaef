#!/usr/bin/env python3
"""Prints the type table of kube_types.cc from the protobuf descriptors inside a kubectl binary.

kubectl (like every client-go program) carries the gzipped FileDescriptorProto of each
k8s.io/api and k8s.io/apimachinery "generated.proto", including the gogo-protobuf options that
tell pointer fields (nullable) from value fields. This script finds them, walks every message
reachable from the kinds the embedded cluster serves and prints one block per message:

    @<package>.<Message>
    <number> <json name or '-' for an inline field> <type>[!]

where a type is s, b, bool, i32, i64, u32, f64 or a message name, prefixed by [] (repeated) or
{} (map with string keys), and '!' marks a Go value field (not a pointer).

A protobuf field name is usually the JSON name, but not always (IngressClassParametersReference
has "aPIGroup" for JSON "apiGroup"): the Go struct tags in the binary
(`json:"apiGroup,omitempty" protobuf:"bytes,1,opt,name=aPIGroup"`) give the JSON names.

Usage: gen_kube_types.py $(readlink -f $(which kubectl)) > table.txt
"""
import re
import sys
import zlib

SCALARS = {1: 'f64', 3: 'i64', 5: 'i32', 8: 'bool', 9: 's', 12: 'b', 13: 'u32'}
PREFIXES = [
    ('k8s.io.api.core.v1.', 'core.'), ('k8s.io.api.apps.v1.', 'apps.'),
    ('k8s.io.api.networking.v1.', 'networking.'), ('k8s.io.api.discovery.v1.', 'discovery.'),
    ('k8s.io.api.coordination.v1.', 'coordination.'),
    ('k8s.io.api.autoscaling.v1.', 'autoscaling.'),
    ('k8s.io.api.rbac.v1.', 'rbac.'), ('k8s.io.api.policy.v1.', 'policy.'),
    ('k8s.io.api.authorization.v1.', 'authorization.'),
    ('k8s.io.api.authentication.v1.', 'authentication.'),
    ('k8s.io.apimachinery.pkg.apis.meta.v1.', 'meta.'),
    ('k8s.io.apimachinery.pkg.runtime.', 'runtime.'),
    ('k8s.io.apimachinery.pkg.api.resource.', 'resource.'),
    ('k8s.io.apimachinery.pkg.util.intstr.', 'intstr.'),
]
# Types with a custom JSON form: not expanded.
LEAVES = {'meta.Time', 'meta.MicroTime', 'resource.Quantity', 'intstr.IntOrString',
          'runtime.RawExtension', 'meta.FieldsV1'}
# Embedded Go fields tagged json:",inline" (the descriptor does not say which embedded fields
# are inlined: ObjectMeta, for one, is embedded but named "metadata").
INLINE = {('core.LocalObjectReference', 'localObjectReference'),
          ('core.VolumeSource', 'volumeSource'), ('core.ProbeHandler', 'handler'),
          ('core.EphemeralContainerCommon', 'ephemeralContainerCommon'),
          ('networking.IngressRuleValue', 'ingressRuleValue')}
ROOTS = ['core.' + k for k in ('Namespace', 'Pod', 'Service', 'Endpoints', 'Secret', 'ConfigMap',
                              'PersistentVolumeClaim', 'Event')] + [
    'apps.Deployment', 'apps.ReplicaSet', 'discovery.EndpointSlice', 'networking.Ingress',
    'networking.IngressClass', 'coordination.Lease', 'autoscaling.Scale', 'meta.DeleteOptions',
    'core.ServiceAccount', 'rbac.Role', 'rbac.RoleBinding', 'rbac.ClusterRole',
    'rbac.ClusterRoleBinding', 'policy.PodDisruptionBudget', 'networking.NetworkPolicy',
    'authorization.SelfSubjectAccessReview', 'authorization.SubjectAccessReview',
    'authorization.SelfSubjectRulesReview', 'authentication.SelfSubjectReview',
    'authentication.TokenRequest']


def varint(b, i):
    r = s = 0
    while True:
        c = b[i]
        i += 1
        r |= (c & 0x7f) << s
        s += 7
        if c < 0x80:
            return r, i


def fields(b):
    i, out = 0, []
    while i < len(b):
        key, i = varint(b, i)
        num, wt = key >> 3, key & 7
        if wt == 0:
            v, i = varint(b, i)
        elif wt == 2:
            n, i = varint(b, i)
            v, i = b[i:i + n], i + n
        elif wt == 1:
            v, i = b[i:i + 8], i + 8
        elif wt == 5:
            v, i = b[i:i + 4], i + 4
        else:
            raise ValueError('wire type %d' % wt)
        out.append((num, v))
    return out


def short(name):
    for full, abbrev in PREFIXES:
        if name.startswith(full):
            return abbrev + name[len(full):]
    return None


def main():
    data = open(sys.argv[1], 'rb').read()
    messages = {}

    def add_message(b, prefix):
        name, flds, nested, opts = None, [], [], b''
        for num, v in fields(b):
            if num == 1:
                name = v.decode()
            elif num == 2:
                flds.append(v)
            elif num == 3:
                nested.append(v)
            elif num == 7:
                opts = v
        full = prefix + '.' + name
        entry = any(n == 7 and v == 1 for n, v in fields(opts))
        out = []
        for f in flds:
            d, o = {}, {}
            for num, v in fields(f):
                if num == 8:
                    o.update(dict(fields(v)))
                else:
                    d[num] = v
            out.append({'num': d[3], 'name': d[1].decode(), 'repeated': d.get(4, 1) == 3,
                        'type': d.get(5), 'type_name': d.get(6, b'').decode().lstrip('.'),
                        'nullable': o.get(65001, 1) != 0})
        messages[full] = {'fields': out, 'entry': entry}
        for n in nested:
            add_message(n, full)

    for m in re.finditer(b'\x1f\x8b\x08\x00\x00\x00\x00\x00', data):
        try:
            out = zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(data[m.start():m.start() + 400000])
        except zlib.error:
            continue
        try:
            parsed = fields(out)
        except (ValueError, IndexError):
            continue
        names = [v for n, v in parsed if n == 1]
        if not names or not names[0].startswith(b'k8s.io/'):
            continue
        package = [v for n, v in parsed if n == 2][0].decode()
        if short(package + '.X') is None:
            continue
        for n, v in parsed:
            if n == 4:
                add_message(v, package)

    # protobuf name -> JSON name, where the struct tags disagree.
    renames = {}
    for json_name, proto_name in set(re.findall(
            rb'json:"([^",]*)[^"]*" protobuf:"[^"]*name=([A-Za-z0-9_]+)', data)):
        if json_name and json_name != b'-' and json_name != proto_name:
            renames.setdefault(proto_name.decode(), set()).add(json_name.decode())

    by_short = {short(k): k for k in messages if short(k)}
    order, seen, queue = [], set(), list(ROOTS)
    while queue:
        s = queue.pop(0)
        if s in seen:
            continue
        seen.add(s)
        order.append(s)
        for f in messages[by_short[s]]['fields']:
            if f['type'] != 11:
                continue
            target = messages[f['type_name']]
            if target['entry']:
                value = [x for x in target['fields'] if x['num'] == 2][0]
                if value['type'] == 11 and short(value['type_name']) not in LEAVES:
                    queue.append(short(value['type_name']))
            elif short(f['type_name']) not in LEAVES:
                queue.append(short(f['type_name']))

    for s in sorted(order):
        print('@' + s)
        for f in messages[by_short[s]]['fields']:
            if f['type'] == 11:
                target = messages[f['type_name']]
                if target['entry']:
                    key = [x for x in target['fields'] if x['num'] == 1][0]
                    value = [x for x in target['fields'] if x['num'] == 2][0]
                    assert key['type'] == 9
                    base = '{}' + (short(value['type_name']) if value['type'] == 11
                                   else SCALARS[value['type']])
                else:
                    base = short(f['type_name'])
            else:
                base = SCALARS[f['type']]
            name = f['name']
            if name in renames:
                assert len(renames[name]) == 1, name
                name = next(iter(renames[name]))
            if f['type'] == 11 and (short(f['type_name']), name) in INLINE:
                name = '-'
            kind = base if base.startswith('{}') else ('[]' if f['repeated'] else '') + base
            value_field = not f['nullable'] and not f['repeated'] and not kind.startswith('{}')
            print('%d %s %s%s' % (f['num'], name, kind, '!' if value_field else ''))


if __name__ == '__main__':
    main()
