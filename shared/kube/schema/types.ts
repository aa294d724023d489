// The contract types of shared/kube/schema: what validation reports.

/** A Kubernetes StatusCause (Status.details.causes[]). */
export interface FieldCause {
  type:
    | 'FieldValueRequired'
    | 'FieldValueInvalid'
    | 'FieldValueNotSupported'
    | 'FieldValueTypeInvalid'
    | 'FieldValueForbidden'
    | 'FieldValueDuplicate'
    | 'FieldValueTooLong'
    | 'FieldValueTooMany'
    | 'FieldValueNotFound';
  /** Path as Kubernetes prints it, e.g. "spec.installModes[0].type". */
  field: string;
  /**
   * The cause text without the field, as kube puts it in a StatusCause, e.g.
   * `Required value` or `Invalid value: "string": spec.replicas in body must be of type integer: "string"`.
   * formatCause() gives the "<field>: <message>" line of the Status message.
   */
  message: string;
}
