/**
 * The casbin model (`rbac`) and the built-in policy of DESIGN.md section 9,
 * in casbin's own text forms, so what an operator reads in docs/security.md
 * and writes into `policy_file` is exactly what the server loads. A
 * principal's roles are those of its credential plus those the `g` lines
 * give it (`g, cert:gateway, operator`).
 */

export const RBAC_MODEL = `[request_definition]
r = sub, obj, act

[policy_definition]
p = sub, obj, act

[role_definition]
g = _, _

[policy_effect]
e = some(where (p.eft == allow))

[matchers]
m = g(r.sub, p.sub) && r.obj == p.obj && r.act == p.act
`;

/** admin inherits operator, which inherits viewer; the agent role's message permissions stay with it. */
export const DEFAULT_POLICY = `p, viewer, agent, view
p, viewer, metrics, view
p, operator, agent, create
p, operator, agent, update
p, operator, agent, view
p, operator, metrics, view
p, admin, agent, delete
p, admin, system, configure
p, admin, audit, view
p, agent, message, send
p, agent, message, receive
g, operator, viewer
g, admin, operator
`;
