package dev.orderless.lease;

/**
 * The lease document, one per resource, never deleted:
 *
 * <pre>
 * { _id: "view:class_rosters",  owner: "host-1/5f0c...", fence: 7,
 *   expiresAt: ISODate(...), acquiredAt: ISODate(...),
 *   position: { _data: "8263..." }, positionAt: ISODate(...) }
 * </pre>
 */
final class LeaseFields {
    static final String ID = "_id";
    static final String OWNER = "owner";
    static final String FENCE = "fence";
    static final String EXPIRES_AT = "expiresAt";
    static final String ACQUIRED_AT = "acquiredAt";
    static final String POSITION = "position";
    static final String POSITION_AT = "positionAt";

    private LeaseFields() {
    }
}
