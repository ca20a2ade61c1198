/**
 * The wire layer's public face: what modules, the app and tests use of it. Inside src/wire, files
 * import each other directly; from outside, only this file is imported.
 */
export { FORM_MEDIA_TYPE, FormReader } from './codecs/form.codec';
export { JSON_MEDIA_TYPES, JsonCodec } from './codecs/json.codec';
export { closingQuote } from './codecs/json-reader';
export { REQUEST_QUOTAS, type WireReader, type WireWriter } from './codecs/wire-codec';
export {
  XML_MEDIA_TYPES,
  XML_SCHEMA_INSTANCE,
  XmlCodec,
  XmlCollectionReader,
} from './codecs/xml.codec';
export { Int32ParamPipe } from './http/int32-param.pipe';
export { WireParamPipe } from './http/wire-param.pipe';
export { requestMediaType } from './http/wire-body';
export { queryStringOf, readQuery } from './http/query-string';
export { RouteMethods } from './http/route-methods';
export { RepresentationCache, VersionedBody, type VersionedSnapshot } from './http/versioned-body';
export { MalformedBodyError, type ModelState, RequestValidationError } from './model/wire-errors';
export { WireExpressAdapter } from './http/wire-express-adapter';
export { NEGOTIATED_BY, WireFormats } from './http/wire-negotiation';
export {
  BooleanField,
  DATE_DESCRIPTION,
  DECIMAL_DESCRIPTION,
  DECIMAL_PRECISION,
  DECIMAL_SCALE,
  DateField,
  type DateFieldOptions,
  type FieldOptions,
  DecimalField,
  type DecimalFieldOptions,
  IntField,
  type IntFieldOptions,
  IntOrTextField,
  ListField,
  type ListFieldOptions,
  type NumberFieldOptions,
  STORED_TEXT_LENGTH,
  TextField,
  type TextFieldOptions,
  describeValue,
} from './model/wire-fields';
export {
  type BoundRecord,
  type WireClass,
  type DecimalBound,
  type WireListMember,
  type WireMember,
  type WireModel,
  WireRecord,
  type WireScalarMember,
  declaredWireModels,
  wireModelOf,
} from './model/wire-model';
export { type WireScalarsOf, pickWireScalars } from './model/wire-record';
export { WireRulesError, checkWireModels, toValidatedDto } from './model/wire-validation';
export { InvalidExampleError, writeWireExamples } from './openapi/wire-examples';
export {
  type HttpExceptionClass,
  WireCreated,
  WireErrors,
  WireRequestBody,
  WireResponse,
} from './openapi/wire-response.decorator';
export { describedTags, WireTag } from './openapi/wire-tag';
export { ExactDecimal } from './values/exact-decimal';
export { formatWireDate, isStorableDate, setServiceTimeZone } from './values/wire-date';
export { INT32_MAX, INT32_MIN } from './values/int32';
export { WireModule } from './wire.module';
